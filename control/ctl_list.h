/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal intrusive doubly linked list, as the kernel's list.h. */
#ifndef NFTDP_CTL_LIST_H
#define NFTDP_CTL_LIST_H

#include <stddef.h>

struct ctl_list {
	struct ctl_list *next, *prev;
};

#define CTL_LIST_INIT(name)                                                                        \
	{                                                                                          \
		&(name), &(name)                                                                   \
	}
#define ctl_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define ctl_list_entry(ptr, type, member) ctl_container_of(ptr, type, member)

static inline void ctl_list_init(struct ctl_list *l)
{
	l->next = l;
	l->prev = l;
}

static inline int ctl_list_empty(const struct ctl_list *l)
{
	return l->next == l;
}

static inline void ctl_list_insert__(struct ctl_list *n, struct ctl_list *prev,
				     struct ctl_list *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert n after pos. */
static inline void ctl_list_add(struct ctl_list *n, struct ctl_list *pos)
{
	ctl_list_insert__(n, pos, pos->next);
}

/* Insert n before pos (at the tail when pos is the head). */
static inline void ctl_list_add_tail(struct ctl_list *n, struct ctl_list *pos)
{
	ctl_list_insert__(n, pos->prev, pos);
}

static inline void ctl_list_del(struct ctl_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define ctl_list_for_each_entry(pos, head, member)                                                 \
	for (pos = ctl_list_entry((head)->next, __typeof__(*pos), member); &pos->member != (head); \
	     pos = ctl_list_entry(pos->member.next, __typeof__(*pos), member))

#define ctl_list_for_each_entry_safe(pos, n, head, member)                                         \
	for (pos = ctl_list_entry((head)->next, __typeof__(*pos), member),                         \
	    n = ctl_list_entry(pos->member.next, __typeof__(*pos), member);                        \
	     &pos->member != (head);                                                               \
	     pos = n, n = ctl_list_entry(n->member.next, __typeof__(*n), member))

#define ctl_list_for_each_entry_reverse(pos, head, member)                                         \
	for (pos = ctl_list_entry((head)->prev, __typeof__(*pos), member); &pos->member != (head); \
	     pos = ctl_list_entry(pos->member.prev, __typeof__(*pos), member))

#endif
