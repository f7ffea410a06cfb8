/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libnftnl 1.2.4 answers an attribute of the wrong type or size with
 * abi_breakage(): a message and exit(). A daemon parsing untrusted netlink
 * must not die of that, so the parse calls run under a guard, and this
 * exit() -- which interposes on libc's for libnftnl, the executable exports
 * it -- jumps back to the guard instead. Anywhere else it is libc's exit.
 * The half-parsed object may leak a few bytes; the message gets EINVAL.
 *
 * libnftnl also strdup()s string attributes that the kernel (NLA_STRING)
 * accepts without a NUL. Inside a message that reads at most into the next
 * attribute's header; at the end of the message it would read past it, so
 * the parser is given a copy followed by zeros.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>

#include "ctl_state.h"

static sigjmp_buf *guard;
/* the expression libnftnl allocated last while a guard was up: an exit()
 * in its parse comes before it is linked to its rule or set, so after the
 * jump back nothing else frees it (nftnl_expr_alloc below) */
static struct nftnl_expr *guard_expr;

#define GUARD_TAIL 8

static struct nlmsghdr *padded_copy(const struct nlmsghdr *nlh)
{
	char *p = calloc(1, nlh->nlmsg_len + GUARD_TAIL);

	if (p)
		memcpy(p, nlh, nlh->nlmsg_len);
	return (struct nlmsghdr *)p;
}

/* whether the rule holds e */
static bool rule_holds(const void *obj, const struct nftnl_expr *e)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(obj);
	struct nftnl_expr *x;
	bool found = false;

	if (!it)
		return true; /* cannot tell: a leak, never a double free */
	while (!found && (x = nftnl_expr_iter_next(it)) != NULL)
		found = x == e;
	nftnl_expr_iter_destroy(it);
	return found;
}

static int is_expr(struct nftnl_expr *x, void *e)
{
	return x == e ? 1 : 0;
}

/* whether the set holds e (NFTA_SET_EXPR / NFTA_SET_EXPRESSIONS) */
static bool set_holds(const void *obj, const struct nftnl_expr *e)
{
	return nftnl_set_expr_foreach(obj, is_expr, (void *)e) != 0;
}

/* chains, objects and flowtables hold no expression */
static bool holds_none(const void *obj, const struct nftnl_expr *e)
{
	(void)obj;
	(void)e;
	return false;
}

#define GUARDED(fn, obj, holds)                                                                    \
	do {                                                                                       \
		struct nlmsghdr *copy = padded_copy(nlh);                                          \
		sigjmp_buf jb;                                                                     \
		volatile int ret = -1;                                                             \
		if (copy == NULL)                                                                  \
			return -1;                                                                 \
		guard_expr = NULL;                                                                 \
		if (sigsetjmp(jb, 0) == 0) {                                                       \
			guard = &jb;                                                               \
			ret = fn(copy, obj);                                                       \
		} else if (guard_expr && !holds(obj, guard_expr)) {                                \
			nftnl_expr_free(guard_expr);                                               \
		}                                                                                  \
		guard = NULL;                                                                      \
		guard_expr = NULL;                                                                 \
		free(copy);                                                                        \
		return ret;                                                                        \
	} while (0)

int ctl_parse_chain(const struct nlmsghdr *nlh, struct nftnl_chain *c)
{
	GUARDED(nftnl_chain_nlmsg_parse, c, holds_none);
}

int ctl_parse_rule(const struct nlmsghdr *nlh, struct nftnl_rule *r)
{
	GUARDED(nftnl_rule_nlmsg_parse, r, rule_holds);
}

int ctl_parse_set(const struct nlmsghdr *nlh, struct nftnl_set *s)
{
	GUARDED(nftnl_set_nlmsg_parse, s, set_holds);
}

int ctl_parse_obj(const struct nlmsghdr *nlh, struct nftnl_obj *o)
{
	GUARDED(nftnl_obj_nlmsg_parse, o, holds_none);
}

int ctl_parse_flowtable(const struct nlmsghdr *nlh, struct nftnl_flowtable *f)
{
	GUARDED(nftnl_flowtable_nlmsg_parse, f, holds_none);
}

/* interposes on libnftnl's own call (the executable exports it): the
 * library's expression, remembered while a guard is up */
struct nftnl_expr *nftnl_expr_alloc(const char *name)
{
	static struct nftnl_expr *(*real_alloc)(const char *);
	struct nftnl_expr *e;

	if (!real_alloc)
		real_alloc =
		    (struct nftnl_expr * (*)(const char *)) dlsym(RTLD_NEXT, "nftnl_expr_alloc");
	e = real_alloc ? real_alloc(name) : NULL;
	if (guard)
		guard_expr = e;
	return e;
}

void exit(int status)
{
	void (*real_exit)(int);

	if (guard) {
		sigjmp_buf *jb = guard;

		guard = NULL;
		siglongjmp(*jb, 1);
	}
	real_exit = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	if (real_exit)
		real_exit(status);
	_Exit(status);
}
