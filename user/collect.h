/* SPDX-License-Identifier: GPL-2.0 */
/* BPF maps -> model. */
#ifndef __MP_COLLECT_H
#define __MP_COLLECT_H

#include "model.h"

struct memphase_bpf;

/* Reads per-phase counters (summed over CPUs), address-space RSS and drop counters. */
int collect__maps(struct memphase_bpf *skel, struct model *m);
/* Adds a process to the BPF target set. */
int collect__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags);

#endif
