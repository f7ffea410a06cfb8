/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vm/ private: what generation.c needs of the rule index (rule_index.c):
 * building a chain's index before its first generation is published.
 */
#ifndef NFTDP_VM_RULE_INDEX_H
#define NFTDP_VM_RULE_INDEX_H

#include "nftdp_vm.h"

/* build ch's rule index, once (none on no memory or nothing to skip) */
void nftdp_vm_chain_index(struct nftdp_vm_chain *ch);

#endif /* NFTDP_VM_RULE_INDEX_H */
