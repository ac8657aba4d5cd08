// SPDX-License-Identifier: GPL-2.0
/* The globals and the maps every unit shares (see shared.h), defined once. */
#define MP_MAPS_OWNER
#include "mm.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct mp_config cfg = {};
const volatile __u32 nr_cpus = 1;	/* possible CPUs, set by user space */
const volatile __u32 ring_wake_bytes = 64 * 1024;	/* a quarter of the ring, set by user space */
/* Run mode: hold a target that maps or execs code not seen before, until its markers are
 * probed. Writable: user space turns it off before it stops listening. */
__u32 stop_on_map = 0;
/* Whose reach the targets must stay within (struct mp_observer): set before any target. */
struct mp_observer observer = {};

/* address spaces (mm.h) */
__u64 pcpu_off[MP_MAX_CPUS];	/* each CPU's offset of per-CPU data */
__u32 pcpu_ready;		/* 1: learnt; 2: could not be (no exact sizes) */
__u64 pcpu_mapbuf[64];		/* a copy of pcpu_base's struct bpf_array */
__u32 mm_seq_next;	/* the seq of the next filling of an mms entry (0 is never one) */
__u64 mms_used[MP_MAX_MMS / 64];	/* bit per mms slot ever claimed (mm.h mm_claim()) */
