// SPDX-License-Identifier: BSD-3-Clause
/*
 * NFNL_SUBSYS_OSF: the OS fingerprint database that nft's osf expression
 * reads (nfnetlink_osf.c's nfnl_osf_add_callback and
 * nfnl_osf_remove_callback, which the nfnl_osf tool drives with pf.os).
 * Records are struct nf_osf_user_finger; vm/expr_osf.c keeps the published
 * database, and a replaced one is freed once no worker can read it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter/nfnetlink_osf.h>

#include "control_priv.h"
#include "ctl_state.h"
#include "nftdp_vm.h"

int ctl_osf_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		const struct nlattr **bad)
{
	const struct nlattr *a, *finger = NULL;
	struct nf_osf_user_finger f;
	struct nftdp_vm_osf_db *old = NULL;
	uint8_t type = nlh->nlmsg_type & 0xff;
	int rc;

	*bad = NULL;
	if (type >= OSF_MSG_MAX)
		return -EINVAL;
	/* nfnl_osf_policy: OSF_ATTR_FINGER at least a whole record */
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) > OSF_ATTR_MAX)
			continue;
		if (mnl_attr_get_type(a) == OSF_ATTR_FINGER) {
			if (mnl_attr_get_payload_len(a) < sizeof(f)) {
				*bad = a;
				return -ERANGE;
			}
			finger = a;
		}
	}
	if (!ctl_session_privileged(s))
		return -EPERM;
	if (!finger)
		return -EINVAL;
	memcpy(&f, mnl_attr_get_payload(finger), sizeof(f));
	if (type == OSF_MSG_ADD) {
		if (!(nlh->nlmsg_flags & NLM_F_CREATE))
			return -EINVAL;
		rc = nftdp_vm_osf_db_add(&f, nlh->nlmsg_flags & NLM_F_EXCL, &old);
	} else {
		rc = nftdp_vm_osf_db_remove(&f, &old);
	}
	if (old) {
		/* workers may hold the old one until their next quiescent
		 * state: a grace period (rare, and short while they poll) */
		if (ctl->cfg.gen_dom)
			nftdp_vm_gen_synchronize(ctl->cfg.gen_dom);
		nftdp_vm_osf_db_free(old);
	}
	return rc;
}
