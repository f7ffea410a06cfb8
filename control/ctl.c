/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's public face (nftdp_control.h): the nf_tables state
 * (nfnl.c and the obj_*.c files) behind the unix socket server (server.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "ctl_state.h"

static const struct ctl_server_ops server_ops = {
    .rcv = ctl_nfnl_rcv,
    .closed = ctl_nfnl_session_closed,
};

int nftdp_ctl_create(const struct nftdp_ctl_config *cfg, struct nftdp_ctl **out)
{
	struct nftdp_ctl *ctl = calloc(1, sizeof(*ctl));
	int err;

	if (ctl == NULL)
		return -ENOMEM;
	ctl->cfg = *cfg;
	ctl->ct_listening = -1;
	err = ctl_state_create(ctl);
	if (err < 0)
		goto err_state;
	err = ctl_build_create(ctl);
	if (err < 0)
		goto err_dp;
	err = ctl_server_open(ctl, cfg->socket_path, &server_ops, &ctl->server);
	if (err < 0)
		goto err_server;
	*out = ctl;
	return 0;

err_server:
	ctl_build_destroy(ctl);
err_dp:
	ctl_state_destroy(ctl);
err_state:
	free(ctl);
	return err;
}

int nftdp_ctl_poll(struct nftdp_ctl *ctl, int timeout_ms)
{
	int rc = ctl_server_poll(ctl->server, timeout_ms);

	ctl_build_tick(ctl);
	nftdp_ctl_ct_events(ctl);    /* conntrack -E */
	nftdp_ctl_trace_events(ctl); /* nft monitor trace */
	nftdp_ctl_nflog_events(ctl); /* log group N */
	ctl_ipset_events(ctl);	     /* -j SET */
	return rc;
}

int nftdp_ctl_fd(const struct nftdp_ctl *ctl)
{
	return ctl_server_fd(ctl->server);
}

bool nftdp_ctl_pending(const struct nftdp_ctl *ctl)
{
	return ctl_server_pending(ctl->server);
}

uint32_t nftdp_ctl_genid(const struct nftdp_ctl *ctl)
{
	return ctl->state->genid;
}

void nftdp_ctl_destroy(struct nftdp_ctl *ctl)
{
	if (ctl == NULL)
		return;
	ctl_server_close(ctl->server);
	ctl_nflog_destroy(ctl);
	ctl_ipset_destroy(ctl);
	ctl_ctnetlink_exp_reset(ctl);
	ctl_build_destroy(ctl);
	ctl_state_destroy(ctl);
	free(ctl);
}
