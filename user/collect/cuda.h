/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA runtime and driver functions that pin host memory or hand out managed memory,
 * and those that give it back, as data: a symbol and the generic rule BPF applies to it
 * (struct mp_alloc_rule). probes.c attaches them in whatever file a target maps.
 */
#ifndef __MP_CUDA_H
#define __MP_CUDA_H

#include <linux/types.h>
#include "memphase.h"

/* One probed function: its symbol and the rule its cookie names. */
struct alloc_sym {
	const char *symbol;
	struct mp_alloc_rule rule;
};

/* The table; its index is the cookie and the rule's index in cfg.allocs. */
extern const struct alloc_sym cuda_allocs[];
extern const unsigned int cuda_nallocs;

/* Copies the rules into the BPF configuration. */
void cuda__fill_cfg(struct mp_config *cfg);

#endif
