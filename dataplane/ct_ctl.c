// SPDX-License-Identifier: BSD-3-Clause
/*
 * The daemon's connection table for ctnetlink (control/ctnetlink.c): the
 * struct nftdp_ctl_ct_ops callbacks, run on the control thread. A shard has
 * one writer, its worker, so walks, gets, deletes and flushes are posted to
 * that worker's mailbox and run there between bursts; stats and the event
 * ring are safe from the control thread as they are.
 *
 * Mailbox protocol (one per worker, one request at a time, the control
 * thread is the only poster): the poster fills the request, then stores
 * POSTED (release). The worker CASes POSTED -> RUNNING (acquire), runs it
 * and stores DONE (release); the poster reads the result after seeing DONE
 * (acquire) and stores IDLE. A poster that gives up (bounded wait, or the
 * worker stopped) CASes POSTED -> IDLE: if that wins the worker never saw
 * the request; if it loses the worker is running it and will finish, so the
 * poster waits for DONE. The request's buffers stay the poster's until then.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "ct_ctl.h"
#include "dataplane_priv.h"
#include "nftdp_conntrack.h"
#include "nftdp_control.h"

#define CT_CTL_WAIT_MS 2000 /* a worker that does not answer in this time */
/* a polling worker takes a request within microseconds, and the request
 * runs in about as long: the poster spins this long before it sleeps, as
 * a sleep's wake-up costs more than the whole request (bench/results/ha.md) */
#define CT_CTL_SPIN_US 500

enum { MB_IDLE, MB_POSTED, MB_RUNNING, MB_DONE };
enum {
	OP_DUMP,
	OP_GET,
	OP_DEL,
	OP_FLUSH,
	OP_UPDATE,
	OP_CREATE,
	OP_ZERO,
	OP_EXP_DEL,
	OP_EXP_FLUSH,
	OP_EXP_TIMEOUT,
	OP_EXP_NEW,
};

struct ct_mbox {
	_Atomic uint32_t state;
	int op;
	uint64_t now_ms;
	const struct nftdp_ct_tuple *t;
	const struct nftdp_ct_change *chg;
	const struct nftdp_ct_expect_new *exp_new;
	const char *helper; /* OP_EXP_FLUSH */
	uint32_t id;
	unsigned int skip, max;
	struct nftdp_ct_info *out;
	int rc;
} __rte_cache_aligned;

struct ct_ctl {
	struct nftdp_dp *dp;
	bool direct;
	atomic_bool live;
	struct nftdp_ctl_ct_ops ops;
	struct ct_mbox mbox[NFTDP_DP_MAX_WORKERS];
};

/* the daemon has one dataplane; workers find their mailbox here */
static struct ct_ctl *ct_ctl;

struct dump_walk {
	unsigned int skip, max, seen, n;
	struct nftdp_ct_info *out;
};

static int dump_cb(const struct nftdp_ct_info *info, void *arg)
{
	struct dump_walk *d = arg;

	if (d->seen++ < d->skip)
		return 0;
	d->out[d->n++] = *info;
	return d->n == d->max;
}

/* The request on the shard, on whichever thread owns it now. The worker's
 * burst clock may be stale when it is idle: the poster's clock is used
 * (both are CLOCK_MONOTONIC milliseconds). */
static int execute(struct nftdp_ct_shard *s, struct ct_mbox *mb)
{
	struct dump_walk d;

	switch (mb->op) {
	case OP_DUMP:
		d = (struct dump_walk){.skip = mb->skip, .max = mb->max, .out = mb->out};
		if (d.max)
			nftdp_ct_walk(s, mb->now_ms, dump_cb, &d);
		return (int)d.n;
	case OP_GET:
		return nftdp_ct_get(s, mb->t, mb->now_ms, mb->out);
	case OP_DEL:
		return nftdp_ct_delete(s, mb->t, mb->id);
	case OP_FLUSH:
		return (int)nftdp_ct_flush(s);
	case OP_UPDATE:
		return nftdp_ct_update(s, mb->chg, mb->now_ms, NULL);
	case OP_CREATE:
		return nftdp_ct_create(s, mb->chg, mb->now_ms, NULL);
	case OP_ZERO:
		return nftdp_ct_get_zero(s, mb->t, mb->id, mb->now_ms, mb->out);
	case OP_EXP_DEL:
		return nftdp_ct_expect_delete(s, mb->t, mb->id);
	case OP_EXP_FLUSH:
		return (int)nftdp_ct_expect_flush(s, mb->helper);
	case OP_EXP_TIMEOUT:
		return nftdp_ct_expect_set_timeout(s, mb->t, mb->id, mb->now_ms);
	case OP_EXP_NEW:
		return nftdp_ct_expect_create(s, mb->exp_new, mb->now_ms);
	default:
		return -EINVAL;
	}
}

void nftdp_dp_ct_ctl_service(struct nftdp_dp_worker *w)
{
	struct ct_ctl *c = ct_ctl;
	struct ct_mbox *mb;
	uint32_t expect = MB_POSTED;

	if (!c)
		return;
	mb = &c->mbox[w->id];
	if (atomic_load_explicit(&mb->state, memory_order_relaxed) != MB_POSTED)
		return;
	if (!atomic_compare_exchange_strong_explicit(&mb->state, &expect, MB_RUNNING,
						     memory_order_acquire, memory_order_relaxed))
		return;
	mb->rc = execute(w->ct, mb);
	atomic_store_explicit(&mb->state, MB_DONE, memory_order_release);
}

static void pause_us(long us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};

	nanosleep(&ts, NULL);
}

/* Run mb's request on shard sh: on its worker when one runs it, else here. */
static int call(struct ct_ctl *c, unsigned int sh, struct ct_mbox *mb)
{
	struct nftdp_dp_worker *w = &c->dp->w[sh];
	uint64_t deadline, spin_end;
	uint32_t expect;

	mb->now_ms = nftdp_now_ms();
	if (c->direct || !atomic_load(&c->live) || w->done)
		return execute(w->ct, mb);
	atomic_store_explicit(&mb->state, MB_POSTED, memory_order_release);
	deadline = mb->now_ms + CT_CTL_WAIT_MS;
	spin_end = rte_get_timer_cycles() + rte_get_timer_hz() * CT_CTL_SPIN_US / 1000000;
	for (;;) {
		uint32_t st = atomic_load_explicit(&mb->state, memory_order_acquire);

		if (st == MB_DONE)
			break;
		if (st == MB_POSTED && (w->done || nftdp_now_ms() >= deadline)) {
			expect = MB_POSTED;
			if (atomic_compare_exchange_strong(&mb->state, &expect, MB_IDLE)) {
				/* never taken: a stopped worker's shard is ours */
				if (w->done)
					return execute(w->ct, mb);
				return -ETIMEDOUT;
			}
			continue; /* the worker took it meanwhile */
		}
		if (rte_get_timer_cycles() < spin_end)
			rte_pause();
		else
			pause_us(20);
	}
	atomic_store_explicit(&mb->state, MB_IDLE, memory_order_relaxed);
	return mb->rc;
}

static int op_dump(void *arg, unsigned int shard, unsigned int skip, struct nftdp_ct_info *out,
		   unsigned int max)
{
	struct ct_ctl *c = arg;
	struct ct_mbox *mb;

	if (shard >= c->dp->n_workers)
		return -EINVAL;
	mb = &c->mbox[shard];
	mb->op = OP_DUMP;
	mb->skip = skip;
	mb->max = max;
	mb->out = out;
	return call(c, shard, mb);
}

/* get and delete: the shard that owns the tuple first, then the others
 * (a flow may live elsewhere when a port's RSS was not symmetric) */
static int op_each(struct ct_ctl *c, int op, const struct nftdp_ct_tuple *t, uint32_t id,
		   struct nftdp_ct_info *out)
{
	unsigned int n = c->dp->n_workers, first = nftdp_ct_tuple_owner(t, n);
	int rc = -ENOENT;

	for (unsigned int k = 0; k < n; k++) {
		unsigned int sh = (first + k) % n;
		struct ct_mbox *mb = &c->mbox[sh];

		mb->op = op;
		mb->t = t;
		mb->id = id;
		mb->out = out;
		rc = call(c, sh, mb);
		if (rc != -ENOENT)
			return rc;
	}
	return rc;
}

static int op_get(void *arg, const struct nftdp_ct_tuple *t, struct nftdp_ct_info *out)
{
	return op_each(arg, OP_GET, t, 0, out);
}

static int op_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	return op_each(arg, OP_DEL, t, id, NULL);
}

static int op_get_zero(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
		       struct nftdp_ct_info *out)
{
	return op_each(arg, OP_ZERO, t, id, out);
}

/* ctnetlink_new_conntrack: the lookup on every shard (as get), then a new
 * entry goes to the shard that owns its original tuple, the one the
 * steering (symmetric RSS) gives its packets */
static int op_change(void *arg, const struct nftdp_ct_change *chg)
{
	struct ct_ctl *c = arg;
	unsigned int n = c->dp->n_workers;
	const struct nftdp_ct_tuple *t =
	    &chg->tuple[(chg->has & NFTDP_CT_CHG_ORIG) ? IP_CT_DIR_ORIGINAL : IP_CT_DIR_REPLY];
	unsigned int first = nftdp_ct_tuple_owner(t, n);
	struct ct_mbox *mb;
	int rc = -ENOENT;

	for (unsigned int k = 0; k < n && rc == -ENOENT; k++) {
		unsigned int sh = (first + k) % n;

		mb = &c->mbox[sh];
		mb->op = OP_UPDATE;
		mb->chg = chg;
		rc = call(c, sh, mb);
	}
	if (rc != -ENOENT || !(chg->has & NFTDP_CT_CHG_CREATE))
		return rc;
	first = (chg->has & NFTDP_CT_CHG_ORIG) ? nftdp_ct_tuple_owner(&chg->tuple[0], n) : first;
	mb = &c->mbox[first];
	mb->op = OP_CREATE;
	mb->chg = chg;
	return call(c, first, mb);
}

static int op_flush(void *arg)
{
	struct ct_ctl *c = arg;
	int total = 0;

	for (unsigned int sh = 0; sh < c->dp->n_workers; sh++) {
		struct ct_mbox *mb = &c->mbox[sh];
		int rc;

		mb->op = OP_FLUSH;
		rc = call(c, sh, mb);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

static void op_stats(void *arg, unsigned int shard, struct nftdp_ct_stats *out)
{
	struct ct_ctl *c = arg;

	if (shard < c->dp->n_workers)
		nftdp_ct_stats(c->dp->w[shard].ct, out);
}

static unsigned int op_events(void *arg, unsigned int shard,
			      bool (*cb)(const struct nftdp_ct_event *ev, void *cb_arg),
			      void *cb_arg)
{
	struct ct_ctl *c = arg;

	if (shard >= c->dp->n_workers)
		return 0;
	return nftdp_ct_events_poll_while(c->dp->w[shard].ct, cb, cb_arg);
}

static void op_events_listen(void *arg, bool on)
{
	struct ct_ctl *c = arg;

	for (unsigned int i = 0; i < c->dp->n_workers; i++)
		nftdp_ct_events_enable(c->dp->w[i].ct, on);
}

struct exp_walk {
	struct nftdp_ct_expect_info *out;
	unsigned int n, max;
};

static int exp_cb(const struct nftdp_ct_expect_info *x, void *arg)
{
	struct exp_walk *d = arg;

	d->out[d->n++] = *x;
	return d->n == d->max;
}

/* the expectation table is read safely from any thread: no mailbox */
static int op_exp_dump(void *arg, unsigned int shard, struct nftdp_ct_expect_info *out,
		       unsigned int max)
{
	struct ct_ctl *c = arg;
	struct exp_walk d = {.out = out, .max = max};
	struct timespec ts;

	if (shard >= c->dp->n_workers || !c->dp->w[shard].ct)
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (max)
		nftdp_ct_expect_walk(c->dp->w[shard].ct,
				     (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u,
				     exp_cb, &d);
	return (int)d.n;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* the shard whose part holds the expectation t matches, or -ENOENT */
static int exp_owner(struct ct_ctl *c, const struct nftdp_ct_tuple *t, uint32_t id,
		     struct nftdp_ct_expect_info *out)
{
	struct nftdp_ct_expect_info tmp;

	for (unsigned int sh = 0; sh < c->dp->n_workers; sh++)
		if (c->dp->w[sh].ct &&
		    nftdp_ct_expect_get(c->dp->w[sh].ct, t, id, mono_ms(), out ? out : &tmp) == 0)
			return (int)sh;
	return -ENOENT;
}

/* read from any thread, as the dump */
static int op_exp_get(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
		      struct nftdp_ct_expect_info *out)
{
	int sh = exp_owner(arg, t, id, out);

	return sh < 0 ? sh : 0;
}

/* removals and changes on the owner's worker */
static int op_exp_on_owner(struct ct_ctl *c, int op, const struct nftdp_ct_tuple *t, uint32_t v)
{
	int sh = exp_owner(c, t, op == OP_EXP_DEL ? v : 0, NULL);
	struct ct_mbox *mb;

	if (sh < 0)
		return sh;
	mb = &c->mbox[sh];
	mb->op = op;
	mb->t = t;
	mb->id = v;
	return call(c, (unsigned int)sh, mb);
}

static int op_exp_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	return op_exp_on_owner(arg, OP_EXP_DEL, t, id);
}

static int op_exp_timeout(void *arg, const struct nftdp_ct_tuple *t, uint32_t timeout_s)
{
	return op_exp_on_owner(arg, OP_EXP_TIMEOUT, t, timeout_s);
}

static int op_exp_flush(void *arg, const char *helper)
{
	struct ct_ctl *c = arg;
	int total = 0;

	for (unsigned int sh = 0; sh < c->dp->n_workers; sh++) {
		struct ct_mbox *mb = &c->mbox[sh];
		int rc;

		mb->op = OP_EXP_FLUSH;
		mb->helper = helper;
		rc = call(c, sh, mb);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

/* on the shard that holds the master (the owner of its tuple first) */
static int op_exp_new(void *arg, const struct nftdp_ct_expect_new *n)
{
	struct ct_ctl *c = arg;
	unsigned int cnt = c->dp->n_workers, first = nftdp_ct_tuple_owner(&n->master, cnt);
	int rc = -ENOENT;

	for (unsigned int k = 0; k < cnt && rc == -ENOENT; k++) {
		unsigned int sh = (first + k) % cnt;
		struct ct_mbox *mb = &c->mbox[sh];

		mb->op = OP_EXP_NEW;
		mb->exp_new = n;
		rc = call(c, sh, mb);
	}
	return rc;
}

int nftdp_dp_ct_ctl_init(struct nftdp_dp *dp, bool direct, bool acct,
			 const struct nftdp_ctl_ct_ops **ops)
{
	struct ct_ctl *c = rte_zmalloc("nftdp_ct_ctl", sizeof(*c), RTE_CACHE_LINE_SIZE);

	if (!c)
		return -ENOMEM;
	c->dp = dp;
	c->direct = direct;
	c->ops = (struct nftdp_ctl_ct_ops){
	    .n_shards = dp->n_workers,
	    .acct = acct,
	    .arg = c,
	    .dump = op_dump,
	    .get = op_get,
	    .del = op_del,
	    .flush = op_flush,
	    .stats = op_stats,
	    .events_poll = op_events,
	    .events_listen = op_events_listen,
	    .exp_dump = op_exp_dump,
	    .change = op_change,
	    .get_zero = op_get_zero,
	    .exp_get = op_exp_get,
	    .exp_del = op_exp_del,
	    .exp_flush = op_exp_flush,
	    .exp_timeout = op_exp_timeout,
	    .exp_new = op_exp_new,
	    .vm_ops = &nftdp_ct_vm_ops,
	};
	ct_ctl = c;
	*ops = &c->ops;
	return 0;
}

void nftdp_dp_ct_ctl_live(bool live)
{
	if (ct_ctl)
		atomic_store(&ct_ctl->live, live);
}

void nftdp_dp_ct_ctl_fini(void)
{
	rte_free(ct_ctl);
	ct_ctl = NULL;
}
