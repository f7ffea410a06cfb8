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
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

static sigjmp_buf *guard;

#define GUARD_TAIL 8

static struct nlmsghdr *padded_copy(const struct nlmsghdr *nlh)
{
	char *p = calloc(1, nlh->nlmsg_len + GUARD_TAIL);

	if (p)
		memcpy(p, nlh, nlh->nlmsg_len);
	return (struct nlmsghdr *)p;
}

#define GUARDED(fn, obj)                                                                           \
	do {                                                                                       \
		struct nlmsghdr *copy = padded_copy(nlh);                                          \
		sigjmp_buf jb;                                                                     \
		volatile int ret = -1;                                                             \
		if (copy == NULL)                                                                  \
			return -1;                                                                 \
		if (sigsetjmp(jb, 0) == 0) {                                                       \
			guard = &jb;                                                               \
			ret = fn(copy, obj);                                                       \
		}                                                                                  \
		guard = NULL;                                                                      \
		free(copy);                                                                        \
		return ret;                                                                        \
	} while (0)

int ctl_parse_chain(const struct nlmsghdr *nlh, struct nftnl_chain *c)
{
	GUARDED(nftnl_chain_nlmsg_parse, c);
}

int ctl_parse_rule(const struct nlmsghdr *nlh, struct nftnl_rule *r)
{
	GUARDED(nftnl_rule_nlmsg_parse, r);
}

int ctl_parse_set(const struct nlmsghdr *nlh, struct nftnl_set *s)
{
	GUARDED(nftnl_set_nlmsg_parse, s);
}

int ctl_parse_obj(const struct nlmsghdr *nlh, struct nftnl_obj *o)
{
	GUARDED(nftnl_obj_nlmsg_parse, o);
}

int ctl_parse_flowtable(const struct nlmsghdr *nlh, struct nftnl_flowtable *f)
{
	GUARDED(nftnl_flowtable_nlmsg_parse, f);
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
