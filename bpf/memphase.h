/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by the BPF programs and user space.
 * No #includes: fixed-width __u32/__u64/__s64 only, no pointers, long or bool.
 * Every ring buffer record starts with a __u32 type; structs are 8-byte aligned
 * with explicit padding.
 */
#ifndef __MEMPHASE_H
#define __MEMPHASE_H

#define MP_MAX_PHASES	32	/* phase ids 0..31; 0 is "startup" */
#define MP_MAX_SLOTS	40	/* log2 buckets: [0], [1], [2,3], ... [2^38, 2^39) and up */
#define MP_COMM_LEN	16
#define MP_MAX_TARGETS	1024
#define MP_MAX_MMS	2048

/* Memory classes: the order of the kernel's MM_* rss counters. */
enum mp_class {
	MP_FILE = 0,	/* MM_FILEPAGES */
	MP_ANON = 1,	/* MM_ANONPAGES */
	MP_SWAP = 2,	/* MM_SWAPENTS */
	MP_SHMEM = 3,	/* MM_SHMEMPAGES */
	MP_NR_CLASSES = 4,
};

/* Per-phase log2 histograms. */
enum mp_hist {
	MP_HIST_CALL_GROWTH = 0,	/* RSS growth (bytes) between two marker calls */
	MP_HIST_MMAP_SIZE = 1,		/* successful mmap/mremap request sizes (bytes) */
	MP_NR_HISTS = 2,
};

/* Marker cookie (bpf_get_attach_cookie): low 8 bits phase id, bits 8..15 the kind. */
enum mp_marker_kind {
	MP_MARK_PHASE = 0,	/* switch to the cookie's phase */
	MP_MARK_DECODE = 1,	/* llama_decode: prompt (n_tokens > 1) or generate (== 1) */
};
#define MP_COOKIE(kind, phase)	(((__u64)(kind) << 8) | (__u64)(phase))

/* Configuration the BPF side reads (rodata). Phase ids of the decode split. */
struct mp_config {
	__u32 phase_prompt;
	__u32 phase_generate;
	__u32 stop_on_exec_map;	/* SIGSTOP a target that maps a new executable file */
	__u32 pad;
};

/* Per-phase counters, a PERCPU_ARRAY indexed by phase id. */
struct mp_phase_stats {
	__u64 faults;			/* page_fault_user of target threads */
	__u64 calls;			/* marker calls that ran in this phase */
	__u64 entries;			/* times the phase was entered */
	__u64 growth[MP_NR_CLASSES];	/* bytes: sum of rss_stat increases */
	__u64 shrink[MP_NR_CLASSES];	/* bytes: sum of rss_stat decreases */
	__u64 mmap_bytes;		/* successful mmap + mremap growth */
	__u64 munmap_bytes;		/* munmap + mremap shrink */
	__u64 brk_bytes;		/* heap growth through brk */
	__u64 brk_shrink_bytes;
	__u64 hist[MP_NR_HISTS][MP_MAX_SLOTS];
};

/* Target flags. */
#define MP_T_WAIT_EXEC	(1U << 0)	/* spawned, not exec'd yet: ignore its events */
#define MP_T_FRESH_MM	(1U << 1)	/* exec'd: its next mm starts from zero RSS */
#define MP_T_EXITED	(1U << 2)
#define MP_T_ROOT	(1U << 3)	/* the process memphase was asked to observe */

/* targets: tgid -> state of one observed process. */
struct mp_target {
	__u32 phase;
	__u32 flags;
	__u32 parent;		/* tgid of the target it was forked from, 0 for roots */
	__u32 pad;
	__u64 call_growth;	/* RSS growth since the last marker call */
	__u64 last_brk;
};

/* mms: mm_id (rss_stat's hashed mm pointer) -> RSS of one address space. */
struct mp_mm {
	__u32 tgid;
	__u32 seeded;			/* bit per class: baseline known */
	__s64 rss[MP_NR_CLASSES];	/* bytes, exact (rss_stat size) */
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;		/* max of file + anon + shmem */
};

/* Drop and health counters, a PERCPU_ARRAY of one entry. */
struct mp_drops {
	__u64 ringbuf;		/* bpf_ringbuf_reserve failed */
	__u64 targets_full;	/* a child could not join the target set */
	__u64 mms_full;		/* an address space could not be tracked */
};

enum mp_event_type {
	MP_EV_PHASE = 1,	/* a target changed phase */
	MP_EV_FORK = 2,		/* a target forked a process, which joined the set */
	MP_EV_EXEC = 3,
	MP_EV_EXIT = 4,		/* a target process ended (last thread) */
	MP_EV_OOM = 5,		/* oom:mark_victim of a target */
	MP_EV_EXEC_MAP = 6,	/* a target mapped an executable file not seen before */
};

struct mp_event {
	__u32 type;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 arg;		/* PHASE: new phase; FORK: child tgid; EXIT: exit code; */
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 old_phase;	/* PHASE: previous phase; others: phase at the event */
	__u32 pad;
	__u64 addr;		/* EXEC_MAP: start of the mapping; */
	__u64 ino;		/* EXEC_MAP: inode number */
	__u64 dev;		/* EXEC_MAP: device */
	__u64 rss[MP_NR_CLASSES]; /* OOM: victim's rss in bytes (swap unused) */
	char comm[MP_COMM_LEN];
};

#endif /* __MEMPHASE_H */
