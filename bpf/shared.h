/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF units share (bpf/NAME.bpf.c, linked into one object by `bpftool gen object`):
 * the constants, the read-only config and the globals user space sets, the per-thread
 * state, and the maps. maps.bpf.c defines the globals and, with MP_MAPS_OWNER, the maps;
 * every other unit sees them extern. The global subprograms one unit calls in another are
 * declared at the end. Shared BPF/user structs are in memphase.h.
 */
#ifndef __MP_SHARED_H
#define __MP_SHARED_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memphase.h"
#include "arch.h"

#define __maybe_unused	__attribute__((unused))

/*
 * Every map is defined here (with MP_MAPS_OWNER, in maps.bpf.c) and extern in the units:
 * libbpf 1.1's linker misplaces an extern map's relocation when two later units each
 * define maps of their own.
 */
#ifdef MP_MAPS_OWNER
#define MP_MAP
#else
#define MP_MAP extern
#endif

#define PROT_EXEC	0x4
#define SIGSTOP		19
#define MAX_ERRNO	4095
#define S_IFMT		00170000
#define S_IFCHR		0020000
#define TMPFS_MAGIC	0x01021994
#define HUGETLBFS_MAGIC	0x958458f6
#define EBUSY		16
#define ENOENT		2
#define MAP_FLUSH_BYTES	(1ULL << 20)	/* per-thread mapping bytes batched before a flush */
#define PR_SET_DUMPABLE	4
#define SUID_DUMP_USER	1		/* mm dumpable bits: the user may ptrace it */
#define MMF_DUMPABLE_MASK 3
#define BINPRM_FLAGS_ENFORCE_NONDUMP 1	/* would_dump(): the program is not readable */
#define MAP_POPULATE	0x8000
#define MAX_DEFERRED	8		/* per thread: growth waiting for its mapping's lookup */
#define VMA_CACHE	3		/* per thread: VMAs remembered besides the last one */
#define MAP_PENDS	4		/* per thread: keys whose growth is batched at once */
#define DEFER_JOIN	(256 << 10)	/* faults this close share one deferred range */
#define MAX_ORPHANS	16		/* per process: deferred growth of threads that ended */

/* global subprograms' arguments (verified once, not at each call): the program's context, a
 * trusted kernel pointer */
#define __arg_ctx	__attribute__((btf_decl_tag("arg:ctx")))
#define __arg_trusted	__attribute__((btf_decl_tag("arg:trusted")))

extern const volatile struct mp_config cfg;
extern const volatile __u32 nr_cpus;	/* possible CPUs, set by user space */
/*
 * Pending bytes past which a record wakes the reader (a quarter of the ring): below it,
 * records wait for the reader's next poll (every 100 ms). A wakeup is paid by the faulting
 * thread inside the program (an IPI to the reader's idle CPU: docs/performance.md).
 */
extern const volatile __u32 ring_wake_bytes;
/* Run mode: hold a target that maps or execs code not seen before, until its markers are
 * probed. Writable: user space turns it off before it stops listening. */
extern __u32 stop_on_map;
/* Whose reach the targets must stay within (struct mp_observer): set before any target. */
extern struct mp_observer observer;

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MP_TSLOTS);
	__type(key, __u32);			/* mp_tslot() */
	__type(value, struct mp_target);
} tslots SEC(".maps");

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MP_MAX_MMS);
	__type(key, __u32);			/* slot (see struct mp_mm) */
	__type(value, struct mp_mm);
} mms SEC(".maps");

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_MAX_PHASES);
	__type(key, __u32);
	__type(value, struct mp_phase_stats);
} stats SEC(".maps");

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_drops);
} drops SEC(".maps");

/*
 * Growth since the last marker call of the target in each slot of tslots, per CPU (the
 * fault path writes no line another CPU writes); the tgid tells a new occupant's count
 * from the last one's. Also the target's faults, growth and shrink, monotonic: a phase event takes their sums over the
 * CPUs less the sums the previous one took (mp_target's ivl_base_*), reading the other
 * CPUs' lines, never writing them.
 */
struct call_pc {
	__u32 tgid;
	__u32 pad;
	__u64 growth;
	__u64 ivl_faults;
	__u64 ivl_growth[MP_NR_CLASSES];
	__u64 ivl_shrink[MP_NR_CLASSES];
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_TSLOTS);
	__type(key, __u32);			/* the target's slot */
	__type(value, struct call_pc);
} call_pc SEC(".maps");

/* A syscall in flight: what its exit needs from its entry. */
struct inflight {
	__u64 len;
	__u64 len2;	/* mremap: new length */
	__u32 prot;
	__s32 fd;
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);			/* tid */
	__type(value, struct inflight);
} inflight SEC(".maps");

struct file_key {
	__u64 ino;
	__u64 dev;
	__u64 exec;	/* seen mapped executable (markers) vs mapped at all (names) */
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, __u8);
} seen_files SEC(".maps");

/*
 * The code files each process image mapped (ino, dev; exec: tgid << 32 | the image's
 * mm_gen): a library seen before in another image is still new to this one, whose stacks
 * need it in their maps snapshot. LRU: an entry pushed out only makes a second event.
 */
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct file_key);
	__type(value, __u8);
} image_files SEC(".maps");

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);	/* resized from user space */
} events SEC(".maps");

/*
 * Growth whose mapping is looked up later, when the address space is not locked: faults in
 * [lo, hi) that found it locked by another thread, or the growth inside an address-space
 * syscall on [lo, hi) (hi == 0 until the syscall's exit tells the range). It is charged to
 * a mapping only if the whole range lies in that one mapping, else to [unknown].
 */
struct deferred {
	__u64 lo;
	__u64 hi;
	__u64 bytes;
	__u32 phase;
	__u32 cls;
};

/* A VMA looked up: its classification (phase/cls unset) and its range. */
struct vma_entry {
	struct mp_map_key map;
	__u64 vm_start;
	__u64 vm_end;
};

/*
 * A thread's growth of one key (a mapping, phase and class) not yet ended: it ends in the
 * thread's buffer for user space (maplog) when it reaches MAP_FLUSH_BYTES, when another key
 * takes its place, at a phase change or when the thread ends.
 */
struct pend {
	struct mp_map_key key;
	__u64 bytes;
	__u64 vm_start, vm_end;	/* the VMA last seen for the key */
	__u32 tgid;
	__u32 pad;
};

/*
 * Per thread: its last fault, the mapping it was in, growth charged to mappings but not
 * yet ended (struct pend: one batch entry per MAP_FLUSH_BYTES or per mapping that makes
 * room, instead of one per page) and the entries not yet sent (maplog), its growth since
 * its last stack sample, and growth waiting for a lookup (see struct deferred).
 */
struct thread_state {
	struct mp_map_key map;	/* classification of [vm_start, vm_end) (phase/cls unset) */
	__u64 vm_start;
	__u64 vm_end;
	__u32 vma_seq;		/* the mm's mm_lock_seq when map and vmas[] were looked up */
	__u32 vma_next;		/* the entry of vmas[] the next lookup replaces */
	/*
	 * ... and the mm's id: after an exec the thread faults in a new address space, whose
	 * mm_lock_seq starts again from 0 and can reach the old one's value
	 */
	__u32 vma_mm;
	__u32 pad3;
	struct vma_entry vmas[VMA_CACHE];	/* the thread's VMAs before map, same seq */
	__u64 fault_addr;	/* set by a fault, consumed by the growth it causes */
	struct pend pend[MAP_PENDS];	/* growth charged to a mapping, not yet ended */
	__u32 pend_last;	/* the entry of pend[] the last growth went to */
	__u32 pend_next;	/* the entry of pend[] a key not among them takes */
	__u64 acc_bytes;	/* growth not yet carried by a stack sample */
	__u64 acc_next;		/* try a sample when acc_bytes reaches this */
	__u32 acc_phase;
	/*
	 * The last growth was not charged to map (waiting for its lookup, inside an mmap with
	 * MAP_POPULATE; or unknown): a sample it triggers names no mapping, not map's stale one
	 */
	__u32 grew_unmapped;
	__u64 reclaim_start_ns;	/* in direct reclaim since */
	__u64 sys_lo, sys_hi;	/* the range the address-space syscall in flight named */
	__u32 sys_nr;		/* that syscall's number + 1; 0: none in flight */
	__u32 ndeferred;	/* entries of deferred[] in use */
	struct deferred deferred[MAX_DEFERRED];
	__u64 maplog_bytes;	/* the growth maplog holds */
	struct mp_maplog_event maplog;	/* growth per mapping not yet sent to user space */
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/*
 * Deferred growth a thread still held when it ended (the address space stayed locked by
 * other threads), for the process's other threads to look up. Lock-free (tracing programs
 * cannot take a bpf_spin_lock): an entry is claimed by compare-and-swap of its state.
 */
enum { ORPHAN_FREE, ORPHAN_BUSY, ORPHAN_READY };

struct orphan {
	__u64 state;
	struct deferred d;
};

struct orphans {
	struct orphan e[MAX_ORPHANS];
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MP_MAX_TARGETS);
	__type(key, __u32);			/* tgid */
	__type(value, struct orphans);
} orphans SEC(".maps");

/* The two large hashes are not preallocated: creating them preallocated took 10-15 ms of
 * memphase's start-up each (65536 elements, most never used); elements come from the
 * kernel's per-CPU BPF allocator when a mapping or allocation is first seen. */
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct mp_map_key);
	__type(value, struct mp_map_val);
} mappings SEC(".maps");

/* Global stack-sample rate cap (GCRA): when the next sample is due. */
struct rate_window {
	__u64 tat;	/* theoretical arrival time, ns */
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rate_window);
} rate SEC(".maps");

/* A call in flight on a thread: the outermost probed call decides (cudaMallocHost calls
 * cuMemAllocHost; that inner call is the same allocation, not a second one). */
struct alloc_call {
	__u64 size;
	__u64 ptr;		/* the pointer, or where the call stores it (MP_PTR_OUT) */
	__u32 rule;
	__u32 depth;		/* probed calls entered and not yet returned */
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);			/* tid */
	__type(value, struct alloc_call);
} alloc_calls SEC(".maps");

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* see mappings */
	__uint(max_entries, 65536);
	__type(key, struct mp_alloc_key);
	__type(value, struct mp_alloc_val);
} allocs SEC(".maps");

/* Per-CPU scratch for a mapped file's path, read under the address-space lock. */
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_fpath);
} fpath_scratch SEC(".maps");

/* Per-CPU scratch for the sample header (too big for the 512-byte BPF stack). */
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_stack_event);
} scratch SEC(".maps");

struct rss_change {
	__s64 amount;	/* bytes */
	__s64 size;	/* bytes after it, or -1: not summed */
};

/* Scratch for a rule's array (MP_RULE_MAX_ARRAY bytes: too big for the BPF stack). */
struct rule_buf {
	__u64 w[MP_RULE_MAX_ARRAY / 8];
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rule_buf);
} rule_bufs SEC(".maps");

/* Ranges whose origin was sent lately (a buffer mapped and unmapped in a loop: one origin). */
struct origin_key {
	__u32 tgid;
	__u32 pad;
	__u64 start;
	__u64 len;
};

MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct origin_key);
	__type(value, __u64);			/* when it was sent, ns */
} origin_recent SEC(".maps");

/* ---- global subprograms, called across units ---- */

/* fault */
__noinline int vma_find(struct thread_state *ts, __u64 addr);
__noinline bool vma_recall(struct thread_state *ts, __u64 addr);
/* mappings */
__noinline int mapping_store(const struct mp_map_key *key_in, struct mp_map_val *nv);
__noinline int maplog_send(struct thread_state *ts);
__noinline int pend_end(struct thread_state *ts, __u32 i);
__noinline int mapping_flush(struct thread_state *ts);
__noinline int deferred_drop(struct thread_state *ts, __u32 tgid);
__noinline int mapping_charge_sub(struct thread_state *ts, __u32 tgid,
				  const struct mp_map_key *key, __u64 bytes);
__noinline int deferred_add_sub(struct thread_state *ts, __u64 lo, __u64 hi, __u64 pc,
				__u64 bytes);
__noinline int deferred_resolve(struct thread_state *ts, __u32 tgid);
__noinline int orphan_leave(struct mp_target *t, __u32 tgid, struct deferred *d);
__noinline int orphan_take(struct orphans *o, struct deferred *d);
__noinline int orphans_adopt(struct thread_state *ts, struct mp_target *t, __u32 tgid);
__noinline int mapping_add(struct thread_state *ts, struct mm_struct *mm __arg_trusted,
			   __u32 tgid, __u64 pc, __u64 bytes);
/* markers */
__noinline __u64 rule_last_pos(struct pt_regs *ctx, __u32 idx, __s64 n);
__noinline long rule_array_count(struct pt_regs *ctx, __u32 idx, __s64 n);
/* procs */
__noinline int target_leave_current(__u32 why, __u64 path);
__noinline int thread_end(struct thread_state *ts, struct mp_target *t, __u32 tgid,
				 bool group_dead);
/* rss */
__noinline int pcpu_learn(void);
__noinline int share_evict(struct mp_mm_pc *pc);
__noinline int rss_amount(struct mm_struct *mm __arg_trusted, __u32 member, struct mp_mm *e,
			  struct mp_mm_pc *pc, struct rss_change *ch);
__noinline int rss_sync(struct mp_target *t, __u32 tgid);
/* stacks */
__noinline int stack_capture(void *ctx __arg_ctx,
			     struct mp_stack_event *h, bool wake);
__noinline int stack_sample(void *ctx __arg_ctx,
			    struct thread_state *ts, __u32 tgid, __u64 pc);

#endif
