// SPDX-License-Identifier: BSD-3-Clause
/*
 * synproxy's server side in the pipeline (nf_synproxy_core.c). The VM
 * checks the cookie of the client's ACK (vm/expr_synproxy.c); here the
 * stolen ACK becomes the SYN to the server (synproxy_send_server_syn),
 * which makes the connection's entry with the synproxy extension as the
 * kernel's template does, and the step before confirm at postrouting (and
 * input with --host-ports) runs ipv4/ipv6_synproxy_hook
 * (conntrack/ct_synproxy.c): the server's SYN-ACK is answered with the ACK
 * to the server (back out of the port it came in by) and the window update
 * to the client (onward, out of the wire partner), both through output and
 * postrouting as the kernel's ip_local_out; then the sequence and
 * timestamp offsets move every packet of the connection.
 */
#include <string.h>

#include <linux/netfilter/nf_synproxy.h>

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

#include <linux/netfilter_ipv4.h> /* after netinet/in.h: NF_IP_PRI_CONNTRACK_CONFIRM */

/* the link-layer header of frame (ip_off bytes) into out: as it came for a
 * segment sent on, addresses swapped for one sent back */
static bool l2_put(const uint8_t *frame, uint32_t ip_off, bool back, uint8_t *out, uint32_t cap)
{
	if (ip_off < 14 || ip_off >= cap)
		return false;
	memcpy(out, frame, ip_off);
	for (unsigned int i = 0; back && i < 6; i++) {
		uint8_t t = out[i];

		out[i] = out[6 + i];
		out[6 + i] = t;
	}
	return true;
}

/* nf_conntrack_in for a segment nftdp sent (ip_local_out's LOCAL_OUT) */
static void track(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *q)
{
	unsigned int v;

	if (!w->ct || !nftdp_vm_gen_uses_ct(w->gen, q->nfproto))
		return;
	nftdp_ct_in_burst(w->ct, &q, 1, &v, w->ctx.now_ms, NULL);
}

/* synproxy_send_server_syn for the client's ACK p; seq_add 1 for an ACK
 * seen again. @return whether it was sent. */
static bool server_syn(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
		       const struct nftdp_dp_meta *mt, uint16_t rx_port, uint32_t seq_add)
{
	struct nftdp_vm_pkt *q;
	uint32_t n;

	if (p >= &w->view[NFTDP_VM_BURST_MAX] || p->th_off + 20 > p->len ||
	    !l2_put(p->data, mt->ip_off, false, w->reply, sizeof(w->reply)))
		return false;
	n = nftdp_vm_synproxy_server_syn(p->data + mt->ip_off, p->nfproto == NFPROTO_IPV6,
					 p->data + p->th_off, p->len - p->th_off, seq_add,
					 w->ctx.now_ms, w->reply + mt->ip_off,
					 (uint32_t)sizeof(w->reply) - mt->ip_off);
	if (!n || !(q = nftdp_dp_send_built(w, rx_port, true, mt->ip_off + n, p)))
		return false;
	/* the template: a new entry with the synproxy and seqadj extensions */
	track(w, q);
	if (w->ct)
		nftdp_ct_synproxy_new(w->ct, q);
	return true;
}

void nftdp_dp_synproxy_client_ack(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
				  const struct nftdp_dp_meta *mt, uint16_t rx_port)
{
	server_syn(w, p, mt, rx_port, 0);
}

/* the server's SYN-ACK p: the ACK to the server, the offsets, the window
 * update to the client */
static void server_synack(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p,
			  struct nftdp_vm_synproxy_opts *opts, uint16_t maxwin)
{
	const struct nftdp_dp_meta *mt = &w->meta[p - w->view];
	uint16_t rx_port = (uint16_t)(p->iif - 1);
	const uint8_t *ip = p->data + mt->ip_off, *th = p->data + p->th_off;
	bool v6 = p->nfproto == NFPROTO_IPV6;
	uint32_t cap = (uint32_t)sizeof(w->reply) - mt->ip_off, n, t;
	struct nftdp_vm_pkt *q;
	int32_t off;

	t = opts->tsval;
	opts->tsval = opts->tsecr;
	opts->tsecr = t;
	if (l2_put(p->data, mt->ip_off, true, w->reply, sizeof(w->reply)) &&
	    (n = nftdp_vm_synproxy_server_ack_build(ip, v6, th, opts, maxwin, w->reply + mt->ip_off,
						    cap)))
		q = nftdp_dp_send_built(w, rx_port, false, mt->ip_off + n, p);
	else
		q = NULL;
	if (q)
		track(w, q); /* synproxy_send_tcp with no nfct: conntrack finds it */
	off = nftdp_ct_synproxy_seqadj(w->ct, p);
	if (q && q->ct && off) {
		/* the kernel's ACK left before the offset was set; this one is
		 * confirmed after, where seqadj takes off from its ack: add it
		 * first, so that it leaves as the kernel's */
		uint8_t *qth = q->data + q->th_off, to[4];

		nftdp_wr32(to, nftdp_rd32(qth + 8) + (uint32_t)off);
		nftdp_inet_csum_replace(qth + 16, qth + 8, to, 4);
		memcpy(qth + 8, to, 4);
	}
	t = opts->tsval;
	opts->tsval = opts->tsecr;
	opts->tsecr = t;
	if (l2_put(p->data, mt->ip_off, false, w->reply, sizeof(w->reply)) &&
	    (n = nftdp_vm_synproxy_client_ack_build(ip, v6, th, opts, w->reply + mt->ip_off,
						    cap)) &&
	    (q = nftdp_dp_send_built(w, rx_port, true, mt->ip_off + n, p)))
		nftdp_ct_synproxy_join(q, p);
}

static void synproxy_step(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
			  unsigned int n, unsigned int *verdicts)
{
	(void)hook;
	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = pkts[i];
		struct nftdp_vm_synproxy_opts opts;
		bool received = p < &w->view[NFTDP_VM_BURST_MAX];
		uint16_t maxwin = 0;

		verdicts[i] = NF_ACCEPT;
		if (!p->ct)
			continue;
		switch (nftdp_ct_synproxy_hook(w->ct, p, &opts, &maxwin, &w->ctx.synproxy)) {
		case NFTDP_CT_SYNPROXY_ACCEPT:
			break;
		case NFTDP_CT_SYNPROXY_DROP:
			verdicts[i] = NF_DROP;
			break;
		case NFTDP_CT_SYNPROXY_SYNACK:
			if (received && p->iif >= 1 && p->iif <= w->dp->n_ports)
				server_synack(w, p, &opts, maxwin);
			verdicts[i] = NF_STOLEN;
			break;
		case NFTDP_CT_SYNPROXY_RETRANS: {
			const uint8_t *ip = p->data + w->meta[p - w->view].ip_off;

			/* synproxy_recv_client_ack(seq + 1) */
			verdicts[i] = NF_DROP;
			if (!received || p->iif < 1 || p->iif > w->dp->n_ports)
				break;
			if (!nftdp_vm_synproxy_cookie_check(ip, p->nfproto == NFPROTO_IPV6,
							    p->data + p->th_off,
							    (uint32_t)(w->ctx.now_ms / 60000))) {
				w->ctx.synproxy.cookie_invalid++;
				break;
			}
			w->ctx.synproxy.cookie_valid++;
			if (server_syn(w, p, &w->meta[p - w->view], (uint16_t)(p->iif - 1), 1)) {
				w->ctx.synproxy.cookie_retrans++;
				verdicts[i] = NF_STOLEN;
			}
			break;
		}
		}
	}
}

static bool synproxy_active(const struct nftdp_vm_gen *gen)
{
	/* the kernel's hooks are there while a synproxy is
	 * (nf_synproxy_ipv4_init): here while a rule runs one; entries
	 * keep their extension, as the kernel's do, for when one returns */
	return nftdp_vm_gen_uses_synproxy(gen);
}

int nftdp_dp_synproxy_init(struct nftdp_dp *dp)
{
	int rc = nftdp_dp_step_add(dp, NF_INET_POST_ROUTING, NF_IP_PRI_CONNTRACK_CONFIRM - 1,
				   synproxy_step, synproxy_active);

	if (rc == 0 && dp->host)
		rc = nftdp_dp_step_add(dp, NF_INET_LOCAL_IN, NF_IP_PRI_CONNTRACK_CONFIRM - 1,
				       synproxy_step, synproxy_active);
	return rc;
}
