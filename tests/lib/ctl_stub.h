/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane in-process, without server.c: a stand-in session and
 * server (the calls control/ makes of them) and a batch builder that hands
 * its messages to ctl_nfnl_rcv. Shared by the unit tests that drive
 * control/ directly (test_ctl_binding, test_ctl_rule) and by fuzz_nfnl.
 */
#ifndef NFTDP_TEST_CTL_STUB_H
#define NFTDP_TEST_CTL_STUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_state.h"

/* how the stand-in behaves; set before the first message */
struct ctl_stub_config {
	const char *comm; /* ctl_session_comm */
	bool ext_ack;	  /* the session asked for extended acks */
	bool listeners;	  /* in every group: multicasts come to the session */
	/* called with each message the session is sent, may be NULL */
	void (*on_msg)(const struct nlmsghdr *nlh, void *arg);
	void *arg;
};

extern struct ctl_stub_config ctl_stub;

/* the errors (NLMSG_ERROR with an errno) the session was sent since the
 * last ctl_batch_send began: the first 16, errno positive, and the seq of
 * the request each answers; n counts all */
struct ctl_stub_errs {
	int err[16];
	uint32_t seq[16];
	unsigned int n;
};
extern struct ctl_stub_errs ctl_stub_errs;
/* the one session every request comes from */
extern struct ctl_session ctl_stub_session;

/* ---- batches: begin, put messages, send ---- */

/* a new batch: its buffer emptied, NFNL_MSG_BATCH_BEGIN put */
void ctl_batch_begin(void);
/* a message of nf_tables' subsystem of family at the batch's end: fill
 * its attributes, then ctl_batch_done */
struct nlmsghdr *ctl_batch_put(uint8_t type, uint16_t flags, uint8_t family);
void ctl_batch_done(struct nlmsghdr *nlh);
/* NFNL_MSG_BATCH_END put, ctl_stub_errs emptied, the whole batch to
 * ctl_nfnl_rcv */
void ctl_batch_send(struct nftdp_ctl *ctl);

#endif
