// SPDX-License-Identifier: GPL-2.0
/*
 * memphase BPF side: per-phase RSS growth of a set of target processes.
 *
 * Tracepoints only (kprobes and fentry are unavailable on some kernels):
 *   exceptions:page_fault_user   faults per phase
 *   rss_stat (BTF)               exact RSS per class -> growth/shrink per phase, peaks
 *   syscalls mmap/munmap/mremap/brk
 *   sched fork/exec/exit         follow children, notice exits
 *   oom:mark_victim              OOM kills of targets
 * and one uprobe program for every phase marker (the cookie says which phase, and which
 * argument rule of the read-only config may pick another).
 * Hot counters live in per-CPU maps; only rare events use the ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memphase.h"

char LICENSE[] SEC("license") = "GPL";

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
/* x86-64 syscall numbers */
#define __NR_mmap	9
#define __NR_munmap	11
#define __NR_brk	12
#define __NR_mremap	25
#define __NR_mprotect	10
#define __NR_madvise	28
#define __NR_mlock	149
#define __NR_mlockall	151
#define __NR_mlock2	325
#define __NR_prctl	157
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

const volatile struct mp_config cfg = {};
const volatile __u32 nr_cpus = 1;	/* possible CPUs, set by user space */
/* Run mode: hold a target that maps or execs code not seen before, until its markers are
 * probed. Writable: user space turns it off before it stops listening. */
__u32 stop_on_map = 0;
/* Whose reach the targets must stay within (struct mp_observer): set before any target. */
struct mp_observer observer = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MP_TSLOTS);
	__type(key, __u32);			/* tgid % MP_TSLOTS */
	__type(value, struct mp_target);
} tslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MP_MAX_TARGETS);
	__type(key, __u32);			/* tgid */
	__type(value, struct mp_target);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MP_MAX_MMS);
	__type(key, __u32);			/* slot (see struct mp_mm) */
	__type(value, struct mp_mm);
} mms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_MAX_PHASES);
	__type(key, __u32);
	__type(value, struct mp_phase_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_drops);
} drops SEC(".maps");

/*
 * Growth since the last marker call of the target in each slot of tslots, per CPU (the
 * fault path writes no line another CPU writes); the tgid tells a new occupant's count
 * from the last one's. Targets in the targets hash count in their call_growth. Also the
 * target's faults, growth and shrink, monotonic: a phase event takes their sums over the
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_TSLOTS);
	__type(key, __u32);			/* tgid % MP_TSLOTS */
	__type(value, struct call_pc);
} call_pc SEC(".maps");

/* A syscall in flight: what its exit needs from its entry. */
struct inflight {
	__u64 len;
	__u64 len2;	/* mremap: new length */
	__u32 prot;
	__s32 fd;
};

struct {
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, __u8);
} seen_files SEC(".maps");

struct {
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
	__u32 pad;
	__u64 reclaim_start_ns;	/* in direct reclaim since */
	__u64 sys_lo, sys_hi;	/* the range the address-space syscall in flight named */
	__u32 sys_nr;		/* that syscall's number + 1; 0: none in flight */
	__u32 ndeferred;	/* entries of deferred[] in use */
	struct deferred deferred[MAX_DEFERRED];
	__u64 maplog_bytes;	/* the growth maplog holds */
	struct mp_maplog_event maplog;	/* growth per mapping not yet sent to user space */
};

struct {
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MP_MAX_TARGETS);
	__type(key, __u32);			/* tgid */
	__type(value, struct orphans);
} orphans SEC(".maps");

/* The two large hashes are not preallocated: creating them preallocated took 10-15 ms of
 * memphase's start-up each (65536 elements, most never used); elements come from the
 * kernel's per-CPU BPF allocator when a mapping or allocation is first seen. */
struct {
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

struct {
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);			/* tid */
	__type(value, struct alloc_call);
} alloc_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* see mappings */
	__uint(max_entries, 65536);
	__type(key, struct mp_alloc_key);
	__type(value, struct mp_alloc_val);
} allocs SEC(".maps");

static __always_inline struct mp_drops *drops_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&drops, &zero);
}

static __always_inline struct mp_phase_stats *stats_get(__u32 phase)
{
	phase &= MP_MAX_PHASES - 1;
	return bpf_map_lookup_elem(&stats, &phase);
}

/* log2 slot by shifts: __builtin_clzll crashes clang 14's BPF backend. */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0, shift;

	if (!v)
		return 0;
	shift = (v > 0xFFFFFFFFULL) << 5; v >>= shift; r = shift;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	r += 1;
	return r < MP_MAX_SLOTS ? r : MP_MAX_SLOTS - 1;
}

static __always_inline void hist_add(struct mp_phase_stats *s, int h, __u64 v)
{
	__u32 slot = log2_slot(v);

	/* the mask lets the verifier bound the index */
	if (h < MP_NR_HISTS && slot < MP_MAX_SLOTS)
		s->hist[h][slot & 63]++;
}

/* The process's state: its slot (an array lookup) or, on a collision, the hash. */
static __always_inline struct mp_target *target_lookup(__u32 tgid)
{
	__u32 slot = tgid & (MP_TSLOTS - 1);
	struct mp_target *t = bpf_map_lookup_elem(&tslots, &slot);

	if (!t || !tgid)
		return NULL;
	if (t->tgid == tgid)
		return t;
	if (!t->collided)
		return NULL;
	return bpf_map_lookup_elem(&targets, &tgid);
}

/* Adds a process: its free slot, or the hash (marking the slot). 0 or -errno. */
static __always_inline int target_add(__u32 tgid, const struct mp_target *nt)
{
	__u32 slot = tgid & (MP_TSLOTS - 1);
	struct mp_target *t = bpf_map_lookup_elem(&tslots, &slot);
	__u32 collided;

	if (!t)
		return -1;
	if (!t->tgid || t->tgid == tgid) {
		collided = t->collided;
		*t = *nt;
		t->tgid = tgid;
		t->collided = collided;
		return 0;
	}
	t->collided = 1;
	return bpf_map_update_elem(&targets, &tgid, nt, BPF_ANY);
}

static __always_inline struct mp_target *target_of_current(__u32 *tgid_out)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_target *t = target_lookup(tgid);

	/* not yet exec'd (run), sizes not yet read (attach), or exited: a recycled pid is
	 * not ours */
	if (!t || (t->flags & (MP_T_WAIT_EXEC | MP_T_SEEDING | MP_T_EXITED)))
		return NULL;
	if (tgid_out)
		*tgid_out = tgid;
	return t;
}

/* Rare events: wake the reader only when a quarter of the ring is pending or on request. */
static __always_inline void event_submit(struct mp_event *e, bool urgent)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (urgent || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= 64 * 1024)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline struct mp_event *event_new(__u32 type, __u32 tgid, __u32 phase)
{
	struct mp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct mp_drops *d;

	if (!e) {
		d = drops_get();
		if (d)
			d->ringbuf++;
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->old_phase = phase;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* Whether tgid's state is its slot of tslots (else it is in the targets hash). */
static __always_inline bool target_in_slot(__u32 tgid)
{
	__u32 slot = tgid & (MP_TSLOTS - 1);
	struct mp_target *st = bpf_map_lookup_elem(&tslots, &slot);

	return st && st->tgid == tgid;
}

/* This CPU's counts of the target in its slot (NULL: the target is in the hash). */
static __always_inline struct call_pc *call_pc_get(__u32 tgid)
{
	__u32 slot = tgid & (MP_TSLOTS - 1), c;
	struct call_pc *pc;

	if (!target_in_slot(tgid))
		return NULL;
	pc = bpf_map_lookup_elem(&call_pc, &slot);
	if (pc && pc->tgid != tgid) {
		pc->tgid = tgid;
		pc->growth = 0;
		pc->ivl_faults = 0;
		for (c = 0; c < MP_NR_CLASSES; c++) {
			pc->ivl_growth[c] = 0;
			pc->ivl_shrink[c] = 0;
		}
	}
	return pc;
}

/* delta bytes of growth of class member in the target's phase interval and marker call */
static __always_inline void call_add(struct mp_target *t, __u32 tgid, __u32 member,
				     __u64 delta)
{
	struct call_pc *c = call_pc_get(tgid);

	member &= MP_NR_CLASSES - 1;
	if (!c) {
		__sync_fetch_and_add(&t->ivl_growth[member], delta);
		if (member != MP_SWAP)
			__sync_fetch_and_add(&t->call_growth, delta);
		return;
	}
	c->ivl_growth[member] += delta;
	if (member != MP_SWAP)
		c->growth += delta;
}

/* delta bytes of shrink of class member in the target's phase interval */
static __always_inline void ivl_shrink_add(struct mp_target *t, __u32 tgid, __u32 member,
					   __u64 delta)
{
	struct call_pc *c = call_pc_get(tgid);

	member &= MP_NR_CLASSES - 1;
	if (c)
		c->ivl_shrink[member] += delta;
	else
		__sync_fetch_and_add(&t->ivl_shrink[member], delta);
}

struct call_sum_ctx {
	__u32 slot;
	__u32 tgid;
	__u64 sum;
};

static long call_sum_cb(__u64 cpu, void *data)
{
	struct call_sum_ctx *x = data;
	struct call_pc *c;

	if (cpu >= nr_cpus)
		return 1;
	c = bpf_map_lookup_percpu_elem(&call_pc, &x->slot, cpu);
	if (c && c->tgid == x->tgid)
		x->sum += __sync_lock_test_and_set(&c->growth, 0);
	return 0;
}

struct ivl_sum_ctx {
	__u32 slot;
	__u32 tgid;
	__u64 faults;
	__u64 growth[MP_NR_CLASSES];
	__u64 shrink[MP_NR_CLASSES];
};

static long ivl_sum_cb(__u64 cpu, void *data)
{
	struct ivl_sum_ctx *x = data;
	struct call_pc *c;
	__u32 i;

	if (cpu >= nr_cpus)
		return 1;
	c = bpf_map_lookup_percpu_elem(&call_pc, &x->slot, cpu);
	if (!c || c->tgid != x->tgid)
		return 0;
	x->faults += c->ivl_faults;
	for (i = 0; i < MP_NR_CLASSES; i++) {
		x->growth[i] += c->ivl_growth[i];
		x->shrink[i] += c->ivl_shrink[i];
	}
	return 0;
}

/*
 * What the target counted since its previous phase event: faults f, growth g and shrink sh
 * per class, address-space bytes mp. The per-CPU sums less the sums the last event took
 * (exchanged, so two events at once still add up: one may see a negative difference).
 */
static __always_inline void ivl_take(struct mp_target *t, __u32 tgid, __u64 *f, __u64 *g,
				     __u64 *sh, __u64 *mp)
{
	struct ivl_sum_ctx x = { .slot = tgid & (MP_TSLOTS - 1), .tgid = tgid };
	__u32 c;

	for (c = 0; c < MP_NR_CLASSES; c++) {
		g[c] = __sync_lock_test_and_set(&t->ivl_growth[c], 0);
		sh[c] = __sync_lock_test_and_set(&t->ivl_shrink[c], 0);
	}
	for (c = 0; c < MP_NR_IVL_MAP; c++)
		mp[c] = __sync_lock_test_and_set(&t->ivl_map[c], 0);
	*f = __sync_lock_test_and_set(&t->ivl_faults, 0);
	if (!target_in_slot(tgid))
		return;
	bpf_loop(MP_MAX_CPUS, ivl_sum_cb, &x, 0);
	for (c = 0; c < MP_NR_CLASSES; c++) {
		g[c] += x.growth[c] - __sync_lock_test_and_set(&t->ivl_base_growth[c], x.growth[c]);
		sh[c] += x.shrink[c] - __sync_lock_test_and_set(&t->ivl_base_shrink[c], x.shrink[c]);
	}
	*f += x.faults - __sync_lock_test_and_set(&t->ivl_base_faults, x.faults);
}

/* The growth since the previous marker call ends one "call" of the phase it ran in. */
static __always_inline void call_flush(struct mp_target *t, __u32 tgid)
{
	struct mp_phase_stats *s = stats_get(t->phase);
	struct call_sum_ctx x = { .slot = tgid & (MP_TSLOTS - 1), .tgid = tgid };
	__u64 g = __sync_lock_test_and_set(&t->call_growth, 0);

	if (target_in_slot(tgid)) {
		bpf_loop(MP_MAX_CPUS, call_sum_cb, &x, 0);
		g += x.sum;
	}
	/* startup is not a marker call (and a process without markers has only that) */
	if (s && t->phase)
		hist_add(s, MP_HIST_CALL_GROWTH, g);
}

/*
 * The mm's mm_lock_seq across kernels: a seqcount since 6.13 (odd while a writer holds the
 * mmap lock, bumped at its lock and unlock; read as the even value it had before the writer),
 * an int bumped at each write unlock in 6.4-6.12 (per-VMA locks), absent before: 0 there, and
 * the VMA cache is then never invalidated (a mapping replaced under the cached range keeps
 * the old answer until a fault falls outside the cached VMAs).
 */
struct mm_struct___seqcount {
	seqcount_t mm_lock_seq;
} __attribute__((preserve_access_index));

struct mm_struct___seqint {
	int mm_lock_seq;
} __attribute__((preserve_access_index));

/* mm: a BTF pointer (plain loads, no bpf_probe_read: this runs on every fault) */
static __always_inline __u32 mm_seq(struct mm_struct *mm)
{
	if (bpf_core_field_exists(((struct mm_struct___seqcount *)mm)->mm_lock_seq))
		return ((struct mm_struct___seqcount *)mm)->mm_lock_seq.sequence & ~1U;
	if (bpf_core_field_exists(((struct mm_struct___seqint *)mm)->mm_lock_seq))
		return ((struct mm_struct___seqint *)mm)->mm_lock_seq;
	return 0;
}

/*
 * An address space's id: x86's context id, unique and never reused (a freed mm's struct
 * can come back as another process's). Truncated: 2^32 address spaces apart to collide.
 */
static __always_inline __u32 mm_id_of(struct mm_struct *mm)
{
	return (__u32)mm->context.ctx_id;
}

struct classify_ctx {
	struct thread_state *ts;
	__u64 sp;
	__u64 addr;
	__u32 seq;
	__u32 mm_id;
};

/*
 * bpf_find_vma callback: what kind of mapping holds the faulting address. Plain loads
 * through the BTF pointers (the verifier makes them fault-safe), not bpf_probe_read calls:
 * a fault in another VMA than the thread's last runs this every time.
 */
static long classify_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct classify_ctx *c = data;
	struct thread_state *ts = c->ts;
	/* task->mm, but through the VMA: a pointer read from a trusted one (task) costs the
	 * verifier a walk of the kernel's BTF (~1.5 ms a visit), one from vma does not */
	struct mm_struct *mm = vma->vm_mm;
	struct file *f = vma->vm_file;
	__u64 start = vma->vm_start, end = vma->vm_end;
	struct inode *inode;
	__u32 mode;
	__u64 magic;

	ts->vm_start = start;
	ts->vm_end = end;
	/* under the mmap read lock: no writer, so stable */
	c->seq = mm_seq(mm);
	c->mm_id = mm_id_of(mm);
	ts->map.start = 0;
	ts->map.dev = 0;
	ts->map.ino = 0;
	if (!f) {
		__u64 brk = mm->brk, start_brk = mm->start_brk, start_stack = mm->start_stack;

		/*
		 * Anonymous memory has no operations; a VMA without a file that has some is one
		 * the kernel maps itself (the out-of-line page of uprobes, the vDSO): the first
		 * 8 bytes of its struct vm_special_mapping's name (not cut at a NUL: past a
		 * shorter name's end) go in place of the inode; user space checks that they
		 * read as a name.
		 */
		if (vma->vm_ops) {
			const struct vm_special_mapping *sm = vma->vm_private_data;
			const char *name = NULL;
			char n[8] = {};

			ts->map.kind = MP_MAP_SPECIAL;
			ts->map.start = start;
			if (sm && !bpf_probe_read_kernel(&name, sizeof(name), &sm->name) && name)
				bpf_probe_read_kernel(n, sizeof(n), name);
			__builtin_memcpy(&ts->map.ino, n, sizeof(n));
			return 0;
		}
		if (start <= brk && end >= start_brk)
			ts->map.kind = MP_MAP_HEAP;
		else if (start <= start_stack && start_stack < end)
			ts->map.kind = MP_MAP_STACK;
		else if (start <= c->sp && c->sp < end) {
			/*
			 * The thread's stack shares this VMA (a thread stack merged with the
			 * mapping next to it): near sp is the stack, the rest is the mapping. The
			 * range cached is the part that holds addr, so that the other part's
			 * faults are looked up again.
			 */
			__u64 lo = c->sp > start + (1 << 20) ? c->sp - (1 << 20) : start;
			__u64 hi = c->sp + (1 << 16) < end ? c->sp + (1 << 16) : end;

			if (c->addr >= lo && c->addr < hi) {
				ts->map.kind = MP_MAP_THREAD_STACK;
				ts->vm_start = lo;
				ts->vm_end = hi;
				return 0;
			}
			ts->map.kind = MP_MAP_ANON;
			ts->map.start = start;
			if (c->addr < lo)
				ts->vm_end = lo;
			else
				ts->vm_start = hi;
		} else {
			ts->map.kind = MP_MAP_ANON;
			ts->map.start = start;
		}
		return 0;
	}
	inode = f->f_inode;
	mode = inode->i_mode;
	magic = inode->i_sb->s_magic;
	ts->map.dev = inode->i_sb->s_dev;
	ts->map.ino = inode->i_ino;
	if ((mode & S_IFMT) == S_IFCHR)
		ts->map.kind = MP_MAP_DEVICE;
	else if (magic == TMPFS_MAGIC || magic == HUGETLBFS_MAGIC)
		ts->map.kind = MP_MAP_SHMEM;
	else
		ts->map.kind = MP_MAP_FILE;
	return 0;
}

/*
 * Remember where this thread faults: the rss_stat events the fault causes (in the same
 * thread, microseconds later) classify that address. Not here: the fault tracepoint
 * runs with interrupts off, where bpf_find_vma must defer its unlock to an irq_work
 * (about 3.5 us per call on a small VM).
 */
static __always_inline void fault_note(__u64 addr)
{
	struct thread_state *ts;

	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->fault_addr = addr;
}

/*
 * vma_lookup()'s lookup: a subprogram, verified once (the cached answer stays inline). The
 * answer it replaces joins the thread's other VMAs if the address space did not change in
 * between (same mm_lock_seq); if it did, they are all forgotten.
 */
__noinline int vma_find(struct thread_state *ts, __u64 addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct classify_ctx c = { .ts = ts, .addr = addr };
	struct vma_entry prev;
	struct pt_regs *regs;
	__u32 i;
	long err;

	if (!ts)
		return -ENOENT;
	prev.map = ts->map;
	prev.vm_start = ts->vm_start;
	prev.vm_end = ts->vm_end;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	c.sp = regs->sp;
	__builtin_memset(&ts->map, 0, sizeof(ts->map));
	ts->vm_start = ts->vm_end = 0;
	err = bpf_find_vma(task, addr, classify_cb, &c, 0);
	if (err == -EBUSY) {
		ts->map = prev.map;
		ts->vm_start = prev.vm_start;
		ts->vm_end = prev.vm_end;
		return err;
	}
	if (err || ts->map.kind == MP_MAP_UNKNOWN)
		return err;
	if (c.seq != ts->vma_seq || c.mm_id != ts->vma_mm) {
		for (i = 0; i < VMA_CACHE; i++)
			ts->vmas[i].map.kind = MP_MAP_UNKNOWN;
		ts->vma_seq = c.seq;
		ts->vma_mm = c.mm_id;
	} else if (prev.map.kind != MP_MAP_UNKNOWN &&
		   (prev.vm_start != ts->vm_start || prev.vm_end != ts->vm_end)) {
		i = ts->vma_next;
		if (i >= VMA_CACHE)
			i = 0;
		ts->vmas[i] = prev;
		ts->vma_next = i + 1;
	}
	return 0;
}

/*
 * The thread's other remembered VMA that holds addr becomes its answer (the answer it
 * replaces takes its place): true, or false if none does. A subprogram, verified once.
 */
__noinline bool vma_recall(struct thread_state *ts, __u64 addr)
{
	struct vma_entry *e, tmp;
	__u32 i;

	if (!ts)
		return false;
	for (i = 0; i < VMA_CACHE; i++) {
		e = &ts->vmas[i];
		if (e->map.kind == MP_MAP_UNKNOWN || addr < e->vm_start || addr >= e->vm_end)
			continue;
		tmp = *e;
		e->map = ts->map;
		e->vm_start = ts->vm_start;
		e->vm_end = ts->vm_end;
		ts->map = tmp.map;
		ts->vm_start = tmp.vm_start;
		ts->vm_end = tmp.vm_end;
		return true;
	}
	return false;
}

/*
 * Looks addr's mapping up into the thread's cache (ts->map, [vm_start, vm_end)), reusing
 * the last answer while addr stays inside it (sequential touches almost always do), or one
 * of the VMA_CACHE before it (faults that alternate between a few mappings), unless fresh
 * (the caller wants the VMA as it is now) or the address space changed since: a writer
 * finished a section of the mmap lock (mm_seq() moved), or the thread has another one
 * (an exec). A writer still in its section may
 * be changing other VMAs, but not the one this fault holds (a VMA it changes stays
 * write-locked until its unlock, so a fault in it waits for the mmap lock, after that).
 * mm: current's (unused when fresh). 0: found; -EBUSY: another thread holds the address space locked (mmap, mprotect), the
 * cache keeps its last answer; another -errno: no mapping there (ts->map is unknown).
 */
static __always_inline long vma_lookup(struct thread_state *ts, struct mm_struct *mm,
					      __u64 addr, bool fresh)
{
	if (!fresh && mm && mm_seq(mm) == ts->vma_seq && mm_id_of(mm) == ts->vma_mm) {
		if (ts->map.kind != MP_MAP_UNKNOWN && addr >= ts->vm_start && addr < ts->vm_end)
			return 0;
		if (vma_recall(ts, addr))
			return 0;
	}
	return vma_find(ts, addr);
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(handle_fault, unsigned long addr, struct pt_regs *regs, unsigned long error_code)
{
	struct mp_phase_stats *s;
	struct call_pc *c;
	struct mp_target *t;
	__u32 tgid;

	t = target_of_current(&tgid);
	if (!t)
		return 0;
	s = stats_get(t->phase);
	if (s)
		s->faults++;
	c = call_pc_get(tgid);
	if (c)
		c->ivl_faults++;
	else
		__sync_fetch_and_add(&t->ivl_faults, 1);
	/* it runs: whatever held it was let go */
	if (t->flags & MP_T_HELD)
		__sync_fetch_and_and(&t->flags, ~MP_T_HELD);
	if (cfg.map_tracking)
		fault_note(addr);
	return 0;
}

/*
 * Kernel-mode faults on user addresses (copy_to_user in read(2), ...): classify only. Not
 * one taken with page faults disabled: the kernel never handles those (copy_*_nofault
 * only fails), so they cause no growth; our own user-memory reads (the stack samples'
 * bpf_probe_read_user of a stack page not present, inside an rss_stat event) are such
 * faults, and noting them would charge the next growth (a MAP_POPULATE's, say) to
 * [stack].
 */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(handle_fault_kernel, unsigned long addr, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (!cfg.map_tracking || addr >= 0x800000000000ULL || !target_of_current(NULL))
		return 0;
	if (bpf_get_current_task_btf()->pagefault_disabled)
		return 0;
	fault_note(addr);
	return 0;
}

/* ---- growth attribution: mappings and stack samples ---- */

/*
 * Adds bytes to a key's entry in the shared mappings hash (nv: the bytes, the VMA last seen
 * and a process that maps it): one insert that carries them when the key is new, else a
 * lookup and an atomic add. A full table keeps the bytes under the (phase, class)'s unknown
 * entry. The path of batches that find the ring buffer full: a subprogram, verified once.
 */
__noinline int mapping_store(const struct mp_map_key *key_in, struct mp_map_val *nv)
{
	struct mp_map_key key;
	struct mp_map_val *v;
	__u64 bytes;

	if (!key_in || !nv)
		return 0;
	key = *key_in;
	bytes = nv->bytes;
	if (key.kind == MP_MAP_UNKNOWN)
		nv->vm_start = nv->vm_end = 0;
	v = bpf_map_lookup_elem(&mappings, &key);
	if (!v) {
		if (!bpf_map_update_elem(&mappings, &key, nv, BPF_NOEXIST))
			return 0;
		v = bpf_map_lookup_elem(&mappings, &key);
	}
	if (!v) {
		struct mp_drops *d = drops_get();
		__u32 phase = key.phase, cls = key.cls;

		if (d)
			d->mappings_full++;
		/* keep the bytes under the class's unknown entry */
		__builtin_memset(&key, 0, sizeof(key));
		key.phase = phase;
		key.cls = cls;
		nv->vm_start = nv->vm_end = 0;
		if (!bpf_map_update_elem(&mappings, &key, nv, BPF_NOEXIST))
			return 0;
		v = bpf_map_lookup_elem(&mappings, &key);
		if (!v) {
			d = drops_get();
			if (d)
				d->mapping_lost_bytes += bytes;
			return 0;
		}
	}
	__sync_fetch_and_add(&v->bytes, bytes);
	if (key.kind != MP_MAP_UNKNOWN) {
		v->vm_start = nv->vm_start;
		v->vm_end = nv->vm_end;
	}
	return 0;
}

/*
 * Sends the thread's batch of mapping growth (MP_EV_MAPLOG) and empties it; when the ring
 * buffer is full, each entry goes to the shared mappings hash instead (nothing is lost).
 */
__noinline int maplog_send(struct thread_state *ts)
{
	struct mp_maplog_event *lg;
	struct mp_map_key key;
	struct mp_map_val nv;
	struct mp_map_rec *r;
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct mp_drops *d;
	__u32 n, i;

	if (!ts || !ts->maplog.n)
		return 0;
	ts->maplog_bytes = 0;
	lg = &ts->maplog;
	n = lg->n;
	if (n > MP_MAPLOG_LEN)
		n = MP_MAPLOG_LEN;
	lg->type = MP_EV_MAPLOG;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= 64 * 1024)
		flags = BPF_RB_FORCE_WAKEUP;
	if (!bpf_ringbuf_output(&events, lg, __builtin_offsetof(struct mp_maplog_event, r) +
				n * sizeof(struct mp_map_rec), flags)) {
		lg->n = 0;
		return 0;
	}
	d = drops_get();
	if (d)
		d->maplog_full++;
	for (i = 0; i < MP_MAPLOG_LEN; i++) {
		if (i >= n)
			break;
		r = &lg->r[i];
		key.phase = r->phase;
		key.cls = r->cls;
		key.kind = r->kind;
		key.pad = 0;
		key.dev = r->dev;
		key.ino = r->ino;
		key.start = r->start;
		nv.bytes = r->bytes;
		nv.vm_start = r->vm_start;
		nv.vm_end = r->vm_start + ((__u64)r->vm_pages << 12);
		nv.tgid = lg->tgid;
		nv.pad = 0;
		mapping_store(&key, &nv);
	}
	lg->n = 0;
	return 0;
}

/* Ends the thread's batch pend[i]: the next entry of its buffer for user space (sent
 * when full). */
__noinline int pend_end(struct thread_state *ts, __u32 i)
{
	struct mp_maplog_event *lg;
	struct mp_map_rec *r;
	__u64 bytes, vm_pages;
	struct pend *p;
	__u32 n;

	if (!ts || i >= MAP_PENDS || !ts->pend[i].bytes)
		return 0;
	p = &ts->pend[i];
	bytes = p->bytes;
	p->bytes = 0;
	lg = &ts->maplog;
	if (lg->n && lg->tgid != p->tgid)
		maplog_send(ts);
	n = lg->n;
	if (n >= MP_MAPLOG_LEN) {
		maplog_send(ts);
		n = 0;
	}
	vm_pages = (p->vm_end - p->vm_start) >> 12;
	r = &lg->r[n];
	r->start = p->key.start;
	r->ino = p->key.ino;
	r->vm_start = p->vm_start;
	r->vm_pages = vm_pages > 0xffffffffULL ? 0xffffffffU : vm_pages;
	r->dev = p->key.dev;
	r->bytes = bytes;
	r->phase = p->key.phase;
	r->cls = p->key.cls;
	r->kind = p->key.kind;
	lg->tgid = p->tgid;
	lg->n = n + 1;
	ts->maplog_bytes += bytes;
	/* full, or holding as much as the thread batches (MAP_FLUSH_BYTES) */
	if (n + 1 >= MP_MAPLOG_LEN || ts->maplog_bytes >= MAP_FLUSH_BYTES)
		maplog_send(ts);
	return 0;
}

/* Ends all the thread's batches (a phase change, the thread's end, memphase's end). */
__noinline int mapping_flush(struct thread_state *ts)
{
	__u32 i;

	if (!ts)
		return 0;
	for (i = 0; i < MAP_PENDS; i++)
		pend_end(ts, i);
	return 0;
}

static __always_inline bool map_key_eq(const struct mp_map_key *a, const struct mp_map_key *b)
{
	return a->phase == b->phase && a->cls == b->cls && a->kind == b->kind &&
	       a->dev == b->dev && a->ino == b->ino && a->start == b->start;
}

/* pend holds (or held: its batch ended, bytes 0) the growth of key in process tgid */
static __always_inline bool pend_is(const struct pend *p, __u32 tgid,
				    const struct mp_map_key *key)
{
	return p->tgid == tgid && map_key_eq(key, &p->key);
}

/*
 * bytes of a known key (phase and cls set), batched in the thread with up to MAP_PENDS - 1
 * other keys' (faults that alternate between a few mappings end no batch): a key not among
 * them takes the entry after the last one a key took, whose batch ends.
 */
static __always_inline void mapping_charge(struct thread_state *ts, __u32 tgid,
					   const struct mp_map_key *key, __u64 bytes)
{
	struct pend *p;
	__u32 i = ts->pend_last, j;

	if (i >= MAP_PENDS)
		i = 0;
	if (!pend_is(&ts->pend[i], tgid, key)) {
		for (j = 0; j < MAP_PENDS; j++)
			if (pend_is(&ts->pend[j], tgid, key))
				break;
		if (j < MAP_PENDS) {
			i = j;
		} else {
			i = ts->pend_next;
			if (i >= MAP_PENDS)
				i = 0;
			ts->pend_next = i + 1;
			pend_end(ts, i);
			ts->pend[i].key = *key;
			ts->pend[i].tgid = tgid;
		}
		ts->pend_last = i;
	}
	p = &ts->pend[i];
	if (key->kind != MP_MAP_UNKNOWN) {
		p->vm_start = ts->vm_start;
		p->vm_end = ts->vm_end;
	}
	p->bytes += bytes;
	if (p->bytes >= MAP_FLUSH_BYTES)
		pend_end(ts, i);
}

/*
 * mapping_charge() as a subprogram for the loops over deferred entries: verified once
 * instead of once per unrolled iteration (the verifier's cost, at start-up, of every
 * program that resolves deferred growth). The fault path keeps the inlined one.
 */
__noinline int mapping_charge_sub(struct thread_state *ts, __u32 tgid,
				  const struct mp_map_key *key, __u64 bytes)
{
	if (!ts || !key)
		return 0;
	mapping_charge(ts, tgid, key, bytes);
	return 0;
}

static __always_inline void count_unresolved(void)
{
	struct mp_drops *d = drops_get();

	if (d)
		d->vma_busy++;
}

/*
 * Keeps growth for a later lookup: joins an entry of the same phase and class whose range
 * is near (faults) or that waits for the same syscall's exit (hi == 0), else takes a free
 * entry. False when all entries are taken.
 */
static __always_inline bool deferred_add_one(struct thread_state *ts, __u64 lo, __u64 hi,
					     __u32 phase, __u32 cls, __u64 bytes)
{
	struct deferred *d;
	int i;

	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes || d->phase != phase || d->cls != cls || !d->hi != !hi)
			continue;
		if (hi && (lo + DEFER_JOIN < d->lo || lo > d->hi + DEFER_JOIN))
			continue;
		if (hi && lo < d->lo)
			d->lo = lo;
		if (hi > d->hi)
			d->hi = hi;
		d->bytes += bytes;
		return true;
	}
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (d->bytes)
			continue;
		d->lo = lo;
		d->hi = hi;
		d->phase = phase;
		d->cls = cls;
		d->bytes = bytes;
		ts->ndeferred++;
		return true;
	}
	return false;
}

/* deferred_add_one() as a subprogram (a rare path: verified once); pc: phase << 32 | cls */
__noinline int deferred_add_sub(struct thread_state *ts, __u64 lo, __u64 hi, __u64 pc,
				__u64 bytes)
{
	if (!ts)
		return 0;
	return deferred_add_one(ts, lo, hi, pc >> 32, (__u32)pc, bytes);
}

static __always_inline bool deferred_add(struct thread_state *ts, __u64 lo, __u64 hi,
					 __u32 phase, __u32 cls, __u64 bytes)
{
	return deferred_add_sub(ts, lo, hi, (__u64)phase << 32 | cls, bytes);
}

/*
 * One lookup for the first deferred range that has one: every entry whose range lies in
 * the mapping found is charged to it; that entry goes to [unknown] if its range is not in
 * one mapping (unmapped since, or a syscall over several mappings). Returns -EBUSY while
 * the address space stays locked, -ENOENT when nothing waits, else 0. A subprogram: it is
 * called from several places.
 */
__noinline int deferred_resolve(struct thread_state *ts, __u32 tgid)
{
	struct mp_map_key key;
	struct deferred *d;
	__u64 lo = 0;
	bool found = false;
	int i;

	if (!ts)
		return -ENOENT;
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (d->bytes && d->hi) {
			lo = d->lo;
			found = true;
			break;
		}
	}
	if (!found)
		return -ENOENT;
	if (vma_lookup(ts, NULL, lo, true) == -EBUSY)
		return -EBUSY;
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes || !d->hi)
			continue;
		if (ts->map.kind != MP_MAP_UNKNOWN && d->lo >= ts->vm_start &&
		    d->hi <= ts->vm_end) {
			key = ts->map;
		} else if (d->lo == lo) {
			__builtin_memset(&key, 0, sizeof(key));
			count_unresolved();
		} else {
			continue;
		}
		key.phase = d->phase;
		key.cls = d->cls;
		key.pad = 0;
		mapping_charge_sub(ts, tgid, &key, d->bytes);
		d->bytes = 0;
		if (ts->ndeferred)
			ts->ndeferred--;
	}
	return 0;
}

/* What still waits when the thread ends goes to [unknown]. */
static __always_inline void deferred_drop(struct thread_state *ts, __u32 tgid)
{
	struct mp_map_key key = {};
	struct deferred *d;
	int i;

	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes)
			continue;
		key.phase = d->phase;
		key.cls = d->cls;
		count_unresolved();
		mapping_charge_sub(ts, tgid, &key, d->bytes);
		d->bytes = 0;
	}
	ts->ndeferred = 0;
}

/*
 * A thread that ends leaves what it could not look up to its process: false if there is no
 * room (the caller charges it to [unknown]). A subprogram: called in a loop.
 */
__noinline int orphan_leave(struct mp_target *t, __u32 tgid, struct deferred *d)
{
	static const struct orphans zero;
	struct orphans *o;
	int i;

	if (!t || !d)
		return false;
	o = bpf_map_lookup_elem(&orphans, &tgid);
	if (!o) {
		bpf_map_update_elem(&orphans, &tgid, &zero, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&orphans, &tgid);
		if (!o)
			return false;
	}
	for (i = 0; i < MAX_ORPHANS; i++) {
		struct orphan *e = &o->e[i];

		if (__sync_val_compare_and_swap(&e->state, ORPHAN_FREE, ORPHAN_BUSY) !=
		    ORPHAN_FREE)
			continue;
		e->d = *d;
		e->state = ORPHAN_READY;
		__sync_fetch_and_or(&t->flags, MP_T_ORPHANS);
		return true;
	}
	return false;
}

/*
 * Takes one ready orphan of o into d: 1, or 0 when none is left. A subprogram: the
 * adopting loop calls it per free entry (verified once, not per iteration).
 */
__noinline int orphan_take(struct orphans *o, struct deferred *d)
{
	int i;

	if (!o || !d)
		return 0;
	for (i = 0; i < MAX_ORPHANS; i++) {
		struct orphan *e = &o->e[i];

		if (e->state == ORPHAN_READY &&
		    __sync_val_compare_and_swap(&e->state, ORPHAN_READY, ORPHAN_BUSY) ==
		    ORPHAN_READY) {
			*d = e->d;
			e->state = ORPHAN_FREE;
			return 1;
		}
	}
	return 0;
}

/* Takes over the process's orphans into the thread's free deferred entries. */
__noinline int orphans_adopt(struct thread_state *ts, struct mp_target *t, __u32 tgid)
{
	struct orphans *o;
	int j;

	if (!ts || !t)
		return 0;
	__sync_fetch_and_and(&t->flags, ~MP_T_ORPHANS);
	o = bpf_map_lookup_elem(&orphans, &tgid);
	if (!o)
		return 0;
	for (j = 0; j < MAX_DEFERRED; j++) {
		struct deferred *d = &ts->deferred[j];

		if (d->bytes)
			continue;
		if (!orphan_take(o, d))
			return 0;	/* none left */
		ts->ndeferred++;
	}
	/* no room for all: the next one to look takes the rest */
	__sync_fetch_and_or(&t->flags, MP_T_ORPHANS);
	return 0;
}

/*
 * Growth of bytes in class cls during phase: charged to the mapping of the fault that
 * caused it (the stash is consumed, so growth without a fault, such as
 * get_user_pages, is charged to "unknown" rather than to a stale mapping). Growth
 * inside an address-space syscall (MAP_POPULATE, MADV_POPULATE_*, mlock, ...: no fault,
 * the address space is locked) waits for the range the syscall names at its exit; a fault
 * that finds the address space locked by another thread waits for the next lookup.
 * mm: current's; pc: phase << 32 | cls. A subprogram, verified once (inlined, it was
 * verified at every state of rss_stat that reached it).
 */
__noinline int mapping_add(struct thread_state *ts, struct mm_struct *mm __arg_trusted,
			   __u32 tgid, __u64 pc, __u64 bytes)
{
	__u32 phase = pc >> 32, cls = (__u32)pc;
	struct mp_map_key key = {};
	__u64 addr;
	long err;

	if (!ts)
		return 0;
	addr = ts->fault_addr;
	ts->fault_addr = 0;
	if (!addr && ts->sys_nr) {
		if (!deferred_add(ts, 0, 0, phase, cls, bytes))
			goto unknown;
		return 0;
	}
	if (addr) {
		err = vma_lookup(ts, mm, addr, false);
		if (!err) {
			key = ts->map;
		} else if (err == -EBUSY) {
			struct mp_drops *d = drops_get();

			if (d)
				d->vma_deferred++;
			/* the heap is known from the mm's brk bounds alone */
			if (addr >= BPF_CORE_READ(mm, start_brk) && addr < BPF_CORE_READ(mm, brk)) {
				key.kind = MP_MAP_HEAP;
			} else {
				addr &= ~4095ULL;
				if (deferred_add(ts, addr, addr + 4096, phase, cls, bytes))
					return 0;
				count_unresolved();
			}
		}
	}
unknown:
	key.phase = phase;
	key.cls = cls;
	key.pad = 0;
	mapping_charge(ts, tgid, &key, bytes);
	/* not inside a syscall of this thread's: the address space may be free now */
	if (ts->ndeferred && !ts->sys_nr)
		deferred_resolve(ts, tgid);
	return 0;
}

/*
 * At most one sample per cfg.sample_interval_ns (--max-samples), spread evenly (a burst
 * of 64 allowed): a thread that is refused keeps its bytes, and its next sample carries
 * them, so a capped sample stands for more bytes instead of bytes being lost.
 */
static __always_inline bool rate_allows(void)
{
	__u64 now, tat, burst;
	struct rate_window *w;
	__u32 zero = 0;

	if (!cfg.sample_interval_ns)
		return true;
	w = bpf_map_lookup_elem(&rate, &zero);
	if (!w)
		return false;
	now = bpf_ktime_get_ns();
	burst = cfg.sample_interval_ns * 64;
	tat = w->tat;
	if (now + burst < tat)
		return false;
	w->tat = (tat > now ? tat : now) + cfg.sample_interval_ns;
	return true;
}

struct stack_vma {
	__u64 end;
};

static long stack_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct stack_vma *)data)->end = vma->vm_end;
	return 0;
}

#define MP_MAX_URET	8	/* pending return probes put back per sample */

/*
 * A pending uretprobe (memphase's own, on a marker with a return phase) replaced the return
 * address at function entry (the entry's sp) by the kernel's trampoline: put the original
 * back in the copy, so that DWARF unwinding goes on past the marker's frame.
 */
static __always_inline void uret_restore(struct task_struct *task, __u8 *stack, __u64 sp,
					 __u64 len)
{
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u64 at, ret, o;
	int i;

	for (i = 0; i < MP_MAX_URET && ri; i++) {
		at = BPF_CORE_READ(ri, stack);
		ret = BPF_CORE_READ(ri, orig_ret_vaddr);
		if (at >= sp && at + 8 <= sp + len) {
			/* bounded: o < MP_STACK_MAX, and 8 bytes fit in the 4096 of slack */
			o = (at - sp) & (MP_STACK_MAX - 1);
			__builtin_memcpy(stack + o, &ret, 8);
		}
		ri = BPF_CORE_READ(ri, next);
	}
}

/* dwarf mode: the user registers plus the stack from sp up, copied page by page */
static __always_inline int sample_dwarf(void *ctx, struct mp_stack_event *h)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct stack_vma sv = {};
	__u8 *buf;
	__u64 sp, len, off = 0, chunk;
	int i;

	/* one page of slack: the verifier cannot relate off and chunk (see below) */
	buf = bpf_ringbuf_reserve(&events, sizeof(*h) + MP_STACK_MAX + 4096, 0);
	if (!buf)
		return -1;
	bpf_probe_read_kernel(h->regs, sizeof(h->regs), regs);
	sp = h->regs[MP_RSP];
	/* all-or-nothing reads stop at the stack's end and at untouched pages */
	if (!bpf_find_vma(task, sp, stack_vma_cb, &sv, 0) && sv.end > sp)
		len = sv.end - sp;	/* u64: a u32 would lose the verifier's bound */
	else
		len = 4096 - (sp & 4095);
	if (len > MP_STACK_MAX)
		len = MP_STACK_MAX;
	for (i = 0; i < MP_STACK_MAX / 4096 + 1; i++) {
		if (off >= len)
			break;
		chunk = i == 0 ? 4096 - (sp & 4095) : 4096;
		if (chunk > len - off)
			chunk = len - off;
		if (off + chunk > MP_STACK_MAX)
			break;
		/* bounds the verifier can see: off < MP_STACK_MAX, chunk <= 4096, slack 4096 */
		off &= MP_STACK_MAX - 1;
		chunk &= 8191;
		if (chunk > 4096)
			chunk = 4096;
		if (bpf_probe_read_user(buf + sizeof(*h) + off, chunk, (void *)(sp + off)))
			break;
		off += chunk;
	}
	h->stack_len = off;
	uret_restore(task, buf + sizeof(*h), sp, off);
	__builtin_memcpy(buf, h, sizeof(*h));
	bpf_ringbuf_submit(buf, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= 1024 * 1024 ?
					BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

/* fp mode: the kernel's frame-pointer walk */
static __always_inline int sample_fp(void *ctx, struct mp_stack_event *h)
{
	__u8 *buf = bpf_ringbuf_reserve(&events, sizeof(*h) + MP_FP_MAX_FRAMES * 8, 0);
	long n;

	if (!buf)
		return -1;
	n = bpf_get_stack(ctx, buf + sizeof(*h), MP_FP_MAX_FRAMES * 8, BPF_F_USER_STACK);
	if (n < 0) {
		h->err = n;
		n = 0;
	}
	h->nframes = (__u64)n / 8;
	__builtin_memcpy(buf, h, sizeof(*h));
	bpf_ringbuf_submit(buf, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * The stack copy as a subprogram, verified once per program instead of at every call site
 * (most of the verifier's time at start-up). ctx is the program's context (arg:ctx).
 */
__noinline int stack_capture(void *ctx __arg_ctx,
			     struct mp_stack_event *h)
{
	if (!h)
		return -ENOENT;
	/* h->mode is dwarf exactly when the configuration's is (origins take fp otherwise): the
	 * read-only configuration lets the verifier skip the mode not in use */
	return cfg.stack_mode == MP_STACKS_DWARF ? sample_dwarf(ctx, h) : sample_fp(ctx, h);
}

/* Per-CPU scratch for the sample header (too big for the 512-byte BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_stack_event);
} scratch SEC(".maps");

/*
 * One stack record in the scratch entry, sent: the header (every field, since the entry
 * keeps the previous record's), the comm, then the user stack in mode. 0, or -errno when
 * no scratch entry or the ring buffer had no room (the caller counts its own drop).
 */
static __always_inline int stack_send(void *ctx, __u32 type, __u32 tgid, __u32 phase,
				      __u32 mode, __u32 cls, __u64 weight, __u64 addr,
				      __u32 prot, __u32 how)
{
	struct mp_stack_event *h;
	__u32 zero = 0;

	h = bpf_map_lookup_elem(&scratch, &zero);
	if (!h)
		return -ENOENT;
	h->type = type;
	h->pid = tgid;
	h->tid = (__u32)bpf_get_current_pid_tgid();
	h->phase = phase;
	h->ts_ns = bpf_ktime_get_ns();
	h->weight = weight;
	h->addr = addr;
	h->mode = mode;
	h->cls = cls;
	h->nframes = 0;
	h->stack_len = 0;
	h->err = 0;
	h->map_prot = prot;
	h->map_how = how;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	return stack_capture(ctx, h);
}

/*
 * A sample is due: taken unless capped. A subprogram (verified once, not inlined in every
 * program that accounts growth); pc: phase << 32 | cls.
 */
__noinline int stack_sample(void *ctx __arg_ctx,
			    struct thread_state *ts, __u32 tgid, __u64 pc)
{
	__u32 phase = pc >> 32, cls = (__u32)pc;
	struct mp_drops *d;
	int err;

	if (!ts)
		return 0;
	if (!rate_allows()) {
		/* ask again only after another sample's worth, not on every page */
		ts->acc_next = ts->acc_bytes + cfg.sample_bytes;
		d = drops_get();
		if (d)
			d->stacks_capped++;
		return 0;
	}
	err = stack_send(ctx, MP_EV_STACK, tgid, phase, cfg.stack_mode, cls, ts->acc_bytes,
			 ts->map.kind != MP_MAP_UNKNOWN ? ts->vm_start : 0, 0, 0);
	if (err) {
		d = drops_get();
		if (d)
			d->stacks++;
		return 0;	/* the bytes stay for the next try */
	}
	ts->acc_bytes = 0;
	ts->acc_next = cfg.sample_bytes;
	return 0;
}

/*
 * One stack sample per cfg.sample_bytes of a thread's growth, weighted by the bytes it
 * stands for, so that weights add up to the growth. Bytes left when the thread's phase
 * changes stay unsampled (user space reports them as such).
 */
static __always_inline void stack_account(void *ctx, struct thread_state *ts, __u32 tgid,
					  __u32 phase, __u32 cls, __u64 bytes)
{
	if (ts->acc_phase != phase || !ts->acc_next) {
		ts->acc_bytes = 0;
		ts->acc_next = cfg.sample_bytes;
		ts->acc_phase = phase;
	}
	ts->acc_bytes += bytes;
	if (ts->acc_bytes < ts->acc_next)
		return;
	stack_sample(ctx, ts, tgid, (__u64)phase << 32 | cls);
}

/* Origins of smaller mappings: how many were sent this second and in all. */
__u64 origin_small_sec = 0;
__u64 origin_small_in_sec = 0;
__u64 origin_small_taken = 0;

static __always_inline bool origin_small_allows(void)
{
	__u64 sec = bpf_ktime_get_ns() / 1000000000ULL;
	struct mp_drops *d;

	if (origin_small_taken >= cfg.origin_small_max)
		goto capped;
	if (origin_small_sec != sec) {
		origin_small_sec = sec;
		origin_small_in_sec = 0;
	}
	if (origin_small_in_sec >= cfg.origin_small_per_sec)
		goto capped;
	/* races between CPUs can let a few more through: a bound, not an exact count */
	__sync_fetch_and_add(&origin_small_in_sec, 1);
	__sync_fetch_and_add(&origin_small_taken, 1);
	return true;
capped:
	d = drops_get();
	if (d)
		d->origins_capped++;
	return false;
}

/* Ranges whose origin was sent lately (a buffer mapped and unmapped in a loop: one origin). */
struct origin_key {
	__u32 tgid;
	__u32 pad;
	__u64 start;
	__u64 len;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct origin_key);
	__type(value, __u64);			/* when it was sent, ns */
} origin_recent SEC(".maps");

#define ORIGIN_REPEAT_NS	1000000000ULL

/* The same range of the same process was sent less than a second ago: skip it. */
static __always_inline bool origin_repeat(__u32 tgid, __u64 start, __u64 len)
{
	struct origin_key k = { .tgid = tgid, .start = start, .len = len };
	__u64 now = bpf_ktime_get_ns(), *sent;
	struct mp_drops *d;

	sent = bpf_map_lookup_elem(&origin_recent, &k);
	if (sent && now - *sent < ORIGIN_REPEAT_NS) {
		d = drops_get();
		if (d)
			d->origins_same++;
		return true;
	}
	bpf_map_update_elem(&origin_recent, &k, &now, BPF_ANY);
	return false;
}

/*
 * A target created a mapping: the stack of the syscall that did, as a stack sample that
 * carries the mapping (at sys_exit, so never on the fault path). Every mapping of
 * cfg.origin_min_bytes or more; smaller ones within the caps; a range mapped again within
 * a second keeps the origin it has (user space would replace it with an equal one).
 */
static __always_inline void origin_send(void *ctx, __u32 tgid, struct mp_target *t,
					__u64 start, __u64 len, __u32 prot, __u32 how)
{
	struct mp_drops *d;
	int err;

	if (!cfg.origin_min_bytes || origin_repeat(tgid, start, len))
		return;
	if (len < cfg.origin_min_bytes && !origin_small_allows())
		return;
	/* origins are rare: dwarf where samples are dwarf, else the kernel's fp walk */
	err = stack_send(ctx, MP_EV_ORIGIN, tgid, t->phase,
			 cfg.stack_mode == MP_STACKS_DWARF ? MP_STACKS_DWARF : MP_STACKS_FP, 0, len,
			 start, prot, how);
	if (err) {
		d = drops_get();
		if (d)
			d->origins++;
	}
}

/*
 * The exact size of an RSS counter, rebuilt from the kernel's per-CPU counter (the BTF
 * tracepoint passes the mm, not a size). The BTF has no __percpu tag, so bpf_per_cpu_ptr()
 * refuses the counter; each CPU's offset is learnt once from a percpu array map instead:
 * its per-CPU base (struct bpf_array's pptrs[0], copied out of the map struct: arithmetic
 * on a map pointer is refused) against bpf_map_lookup_percpu_elem() of each CPU (base plus
 * that CPU's offset). The sum is count plus every CPU's counter, read again while count
 * moved (a fold ran in between), as percpu_counter_sum() does under the counter's lock.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_base SEC(".maps");

__u64 pcpu_off[MP_MAX_CPUS];	/* each CPU's offset of per-CPU data */
__u32 pcpu_ready;		/* 1: learnt; 2: could not be (no exact sizes) */
__u64 pcpu_mapbuf[64];		/* a copy of pcpu_base's struct bpf_array */

/* Learns pcpu_off[] (a subprogram: run once, verified once). 0 or -errno. */
__noinline int pcpu_learn(void)
{
	__u32 o = bpf_core_field_offset(struct bpf_array, pptrs), zero = 0, i;
	void *map = &pcpu_base;
	__u64 base, pv;
	void *p;

	if (o > sizeof(pcpu_mapbuf) - 8 ||
	    bpf_probe_read_kernel(pcpu_mapbuf, sizeof(pcpu_mapbuf), map))
		goto fail;
	base = pcpu_mapbuf[(o / 8) & 63];
	for (i = 0; i < MP_MAX_CPUS && i < nr_cpus; i++) {
		p = bpf_map_lookup_percpu_elem(&pcpu_base, &zero, i);
		if (!p)
			goto fail;
		/* the pointer's value (a pointer minus a scalar would be refused) */
		if (bpf_probe_read_kernel(&pv, sizeof(pv), &p))
			goto fail;
		pcpu_off[i] = pv - base;
	}
	pcpu_ready = 1;
	return 0;
fail:
	pcpu_ready = 2;
	return -ENOENT;
}

/*
 * count + each CPU's counter of one percpu_counter (pages), or -1 when a read failed; into
 * *count the count it was taken with and into *own this CPU's part. Each CPU's s32 is a
 * probe read: a bpf_rdonly_cast() load would be cheaper, but a kfunc makes libbpf parse
 * the kernel's whole BTF at every start (the build's minimal BTF has no kfuncs).
 */
static __always_inline __s64 pcpu_sum(const struct percpu_counter *pc, __s64 *count, __s32 *own)
{
	__u32 i, cpu = bpf_get_smp_processor_id();
	__u64 counters = (__u64)pc->counters;
	__s64 c1, c2, sum;
	__s32 l;
	int try;

	c2 = pc->count;
	for (try = 0; try < 4; try++) {
		c1 = c2;
		sum = c1;
		for (i = 0; i < MP_MAX_CPUS && i < nr_cpus; i++) {
			if (bpf_probe_read_kernel(&l, sizeof(l), (void *)(counters + pcpu_off[i])))
				return -1;
			if (i == cpu)
				*own = l;
			sum += l;
		}
		c2 = pc->count;
		if (c1 == c2)
			break;
	}
	*count = c1;
	return sum;
}

/* &mm->rss_stat[member] (NULL: no such member), once pcpu_off[] is known */
static __always_inline const struct percpu_counter *rss_counter(struct mm_struct *mm, int member)
{
	if (pcpu_ready != 1 && (pcpu_ready || pcpu_learn()))
		return NULL;
	switch (member) {
	case 0: return &mm->rss_stat[0];
	case 1: return &mm->rss_stat[1];
	case 2: return &mm->rss_stat[2];
	case 3: return &mm->rss_stat[3];
	}
	return NULL;
}

/* The counters as the OOM report prints them (get_mm_counter: the approximate value). */
static __always_inline __u64 mm_counter(struct mm_struct *mm, int member)
{
	__s64 v = BPF_CORE_READ(mm, rss_stat[member].count);

	return v > 0 ? (__u64)v << 12 : 0;
}

/*
 * --max-rss: freeze the process at the page that crossed the limit (in its own context,
 * so the stop is immediate); user space writes the outputs, then ends it.
 */
static __always_inline void guard_trip(struct mp_target *t, __u32 tgid, __s64 total)
{
	struct mp_event *e;

	if (t->flags & MP_T_GUARD_HIT)
		return;
	t->flags |= MP_T_GUARD_HIT;
	bpf_send_signal(SIGSTOP);
	e = event_new(MP_EV_GUARD, tgid, t->phase);
	if (!e)
		return;
	e->rss[0] = total;
	event_submit(e, true);
}

/* The entry of mm_id: one of its MP_MM_PROBES slots (array lookups, no hashing), or NULL. */
static __always_inline struct mp_mm *mm_lookup(__u32 mm_id)
{
	struct mp_mm *mm;
	__u32 i, slot;

	for (i = 0; i < MP_MM_PROBES; i++) {
		slot = (mm_id + i) & (MP_MAX_MMS - 1);
		mm = bpf_map_lookup_elem(&mms, &slot);
		if (mm && mm->tgid && mm->mm_id == mm_id)
			return mm;
	}
	return NULL;
}

/* Each CPU's share of an address space's size (see struct mp_mm_pc). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_MMPC_SLOTS);
	__type(key, __u32);
	__type(value, struct mp_mm_pc);
} mmpc SEC(".maps");

__u32 mm_seq_next;	/* the seq of the next filling of an mms entry (0 is never one) */

/*
 * Moves the share of the address space that holds this CPU's slot pc into its entry (a
 * subprogram: verified once, run when two address spaces take turns on one slot).
 */
__noinline int share_evict(struct mp_mm_pc *pc)
{
	struct mp_mm *mm;
	int c;

	if (!pc || !pc->seq)
		return 0;
	mm = mm_lookup(pc->mm_id);
	if (mm && mm->seq == pc->seq)
		for (c = 0; c < MP_NR_CLASSES; c++)
			if (pc->part[c])
				__sync_fetch_and_add(&mm->rss[c], pc->part[c]);
	return 0;
}

/* This CPU's share of mm, taking over the slot if another address space holds it. */
static __always_inline struct mp_mm_pc *share_get(struct mp_mm *mm)
{
	__u32 i = mm->mm_id & (MP_MMPC_SLOTS - 1);
	struct mp_mm_pc *pc = bpf_map_lookup_elem(&mmpc, &i);
	int c;

	if (!pc || (pc->mm_id == mm->mm_id && pc->seq == mm->seq))
		return pc;
	share_evict(pc);
	pc->mm_id = mm->mm_id;
	pc->seq = mm->seq;
	pc->seen = 0;
	for (c = 0; c < MP_NR_CLASSES; c++)
		pc->part[c] = 0;
	return pc;
}

struct share_sum_ctx {
	__u32 slot;
	__u32 mm_id;
	__u32 seq;
	__u32 pad;
	__s64 v[MP_NR_CLASSES];
};

static long share_sum_cb(__u64 cpu, void *data)
{
	struct share_sum_ctx *x = data;
	struct mp_mm_pc *pc;
	int c;

	if (cpu >= nr_cpus)
		return 1;
	pc = bpf_map_lookup_percpu_elem(&mmpc, &x->slot, cpu);
	if (!pc || pc->mm_id != x->mm_id || pc->seq != x->seq)
		return 0;
	for (c = 0; c < MP_NR_CLASSES; c++)
		x->v[c] += pc->part[c];
	return 0;
}

/*
 * The sizes (bytes per class) of mm now: its entry's plus every CPU's share (reading
 * the other CPUs' lines: for shrinks, phase events and the guard, not for growth).
 */
static __always_inline void mm_sizes(const struct mp_mm *mm, __s64 *v)
{
	struct share_sum_ctx x = {
		.slot = mm->mm_id & (MP_MMPC_SLOTS - 1), .mm_id = mm->mm_id, .seq = mm->seq,
	};
	int c;

	bpf_loop(MP_MAX_CPUS, share_sum_cb, &x, 0);
	for (c = 0; c < MP_NR_CLASSES; c++)
		v[c] = mm->rss[c] + x.v[c];
}

/* The RSS of t's own address space, by class, as the latest exact sizes (0: unknown). */
static __always_inline void event_rss(struct mp_event *e, struct mp_target *t, __u32 tgid)
{
	struct mp_mm *mm = mm_lookup(t->own_mm);
	__s64 v[MP_NR_CLASSES];
	int c;

	if (!mm || mm->tgid != tgid || mm->gen != t->mm_gen)
		return;
	mm_sizes(mm, v);
	for (c = 0; c < MP_NR_CLASSES; c++)
		e->rss[c] = v[c] > 0 ? v[c] : 0;
}

/*
 * Claims the first free slot of mm_id for tgid (compare-and-swap of tgid and mm_id at
 * once): *mine says the caller fills it in. Another CPU may have claimed it first: its
 * entry is returned (not yet ready, maybe). NULL: all the slots are taken.
 */
static __always_inline struct mp_mm *mm_claim(__u32 mm_id, __u32 tgid, bool *mine)
{
	__u64 want = (__u64)mm_id << 32 | tgid, old;
	struct mp_mm *mm;
	__u32 i, slot;

	*mine = false;
	for (i = 0; i < MP_MM_PROBES; i++) {
		slot = (mm_id + i) & (MP_MAX_MMS - 1);
		mm = bpf_map_lookup_elem(&mms, &slot);
		if (!mm)
			return NULL;
		old = __sync_val_compare_and_swap((__u64 *)mm, 0, want);
		if (!old) {
			*mine = true;
			return mm;
		}
		if ((__u32)(old >> 32) == mm_id && (__u32)old)
			return mm;
	}
	return NULL;
}

/* Raises t's peaks to those of one of its address spaces whose entry is taken over. */
static __always_inline void peaks_keep(struct mp_target *t, const struct mp_mm *mm)
{
	__s64 v[MP_NR_CLASSES], total;
	int c;

	mm_sizes(mm, v);
	total = v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
	for (c = 0; c < MP_NR_CLASSES; c++) {
		if (v[c] > t->peak[c])
			t->peak[c] = v[c];
		if (mm->peak[c] > t->peak[c])
			t->peak[c] = mm->peak[c];
	}
	if (total > t->peak_total)
		t->peak_total = total;
	if (mm->peak_total > t->peak_total)
		t->peak_total = mm->peak_total;
}

/* Sets a claimed entry for target t (tgid, mm_id set) to sizes v (bytes per class), the
 * classes of seeded known exactly, then marks it ready. */
static __always_inline void mm_set(struct mp_mm *mm, struct mp_target *t, const __s64 *v,
				   __u32 seeded)
{
	int c;

	mm->gen = t->mm_gen;
	/* the CPUs' shares of an earlier filling are not this one's */
	mm->seq = __sync_fetch_and_add(&mm_seq_next, 1) + 1;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		mm->floor[c] = 0;
		mm->rss[c] = mm->peak[c] = v[c];
	}
	mm->peak_total = v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
	/* an exchange: a full barrier, the fields above are seen before the mark */
	__sync_lock_test_and_set(&mm->seeded, seeded | MP_MM_READY);
}

/* Fills in a claimed entry for target t (tgid, mm_id set), then marks it ready. cmm: the
 * kernel's mm (current's). */
static __always_inline void mm_fill(struct mp_mm *mm, struct mp_target *t, struct mm_struct *cmm)
{
	__s64 v[MP_NR_CLASSES] = {};
	__u32 seeded = 0;
	int c;

	if (t->flags & MP_T_FRESH_MM) {
		/* after exec the new mm starts empty: count from zero */
		seeded = (1 << MP_NR_CLASSES) - 1;
		__sync_fetch_and_and(&t->flags, ~MP_T_FRESH_MM);
	} else if (cmm) {
		/*
		 * Attached or forked: what it already holds is not growth. Until each
		 * class's first exact event, show the approximate counters.
		 */
		for (c = 0; c < MP_NR_CLASSES; c++)
			v[c] = mm_counter(cmm, c);
	}
	mm_set(mm, t, v, seeded);
}

/*
 * The mm of a curr=1 rss_stat event (current's own mm cmm, id mm_id, current a target: *tp,
 * *tgidp) and the target it charges (*tp, *tgidp changed when it is another's): entered in
 * mms on first sight. NULL: mms is full, or the entry is being filled in by another CPU (the next
 * event's delta covers this one).
 */
static __always_inline struct mp_mm *rss_mm_current(struct mm_struct *cmm, __u32 mm_id,
						     struct mp_target **tp, __u32 *tgidp)
{
	struct mp_target *t = *tp;
	__u32 tgid = *tgidp;
	struct mp_mm *mm;
	bool mine;

	mm = mm_lookup(mm_id);
	if (mm && mm->tgid != tgid) {
		/* vfork/CLONE_VM: a child running on its live parent's mm charges it */
		struct mp_target *owner = target_lookup(mm->tgid);

		if (owner && !(owner->flags & MP_T_EXITED) && mm->gen == owner->mm_gen) {
			t = owner;
			tgid = mm->tgid;
		}
	}
	if (!mm) {
		mm = mm_claim(mm_id, tgid, &mine);
		if (!mm) {
			struct mp_drops *d = drops_get();

			if (d)
				d->mms_full++;
			return NULL;
		}
		if (mine)
			mm_fill(mm, t, cmm);
	} else if (mm->tgid != tgid || mm->gen != t->mm_gen) {
		/*
		 * An entry left by an exited process whose mm struct was recycled (or by the
		 * image before an exec): take it over, keeping its peaks in its owner's state.
		 */
		struct mp_target *prev = target_lookup(mm->tgid);

		if (prev)
			peaks_keep(prev, mm);
		mm->seeded = 0;
		*(__u64 *)mm = (__u64)mm_id << 32 | tgid;
		mm_fill(mm, t, cmm);
	}
	if (!(mm->seeded & MP_MM_READY))
		return NULL;
	*tp = t;
	*tgidp = tgid;
	return mm;
}

/*
 * The mm of a curr=0 rss_stat event (reclaim, exit teardown, fork copy: someone else's
 * context), found by the id learnt from earlier curr=1 events, and its owner. NULL: not
 * ours.
 */
static __always_inline struct mp_mm *rss_mm_foreign(__u32 mm_id, struct mp_target **tp,
						     __u32 *tgidp)
{
	struct mp_target *t;
	struct mp_mm *mm;
	__u32 tgid;

	mm = mm_lookup(mm_id);
	if (!mm || !(mm->seeded & MP_MM_READY))
		return NULL;
	tgid = mm->tgid;
	t = target_lookup(tgid);
	/* out of the user's reach: even its teardown (whose sums would bring in what it grew
	 * unseen) is not counted */
	if (!t || (t->flags & MP_T_LEFT))
		return NULL;
	/*
	 * Someone else's context on a live image is ours: kswapd reclaiming, a uprobe's
	 * copy of a text page (memphase attaching markers), a debugger's or
	 * process_vm_writev()'s writes. The owner's own exit or exec teardown is too; another
	 * context's on an exited or replaced image is not (an mm whose last user is not its
	 * owner: a reader of its /proc files).
	 */
	if ((bpf_get_current_pid_tgid() >> 32) != tgid &&
	    ((t->flags & MP_T_EXITED) || mm->gen != t->mm_gen))
		return NULL;
	*tp = t;
	*tgidp = tgid;
	return mm;
}

/*
 * The change of class member's size of mm that an rss_stat event on this CPU reports
 * (bytes), accounted in the CPU's share pc (see struct mp_mm_pc): what this CPU's part of
 * the kernel's counter moved since its last look, while the counter's count has not moved
 * (no fold anywhere, so all the change since is this CPU's: a fold moves count, and leaves
 * the folding CPU's part at 0); else (or with RSS_WHOLE in member) the counter summed less
 * the sizes held, into *ch. 0, or -1: the counter could not be read. rss_stat calls it as
 * the global subprogram rss_amount(), verified once (inlined, it was verified at every
 * state of rss_stat that reached it: 5k of its 25k instructions walked, 11 of its 29 ms);
 * rss_sync() inlines it, since its mm (current's, read from the task) is not trusted.
 */
#define RSS_WHOLE	0x100
struct rss_change {
	__s64 amount;	/* bytes */
	__s64 size;	/* bytes after it, or -1: not summed */
};

static __always_inline int rss_amount_of(struct mm_struct *mm, __u32 member, struct mp_mm *e,
					 struct mp_mm_pc *pc, struct rss_change *ch)
{
	bool whole = member & RSS_WHOLE;
	const struct percpu_counter *ctr;
	__u32 bit, cpu, k;
	__s64 count, sum, v[MP_NR_CLASSES];
	__s32 own = 0;

	if (!e || !pc || !ch)
		return -1;
	/* the verifier must see the index bounded: no mask the compiler can drop */
	k = member & (MP_NR_CLASSES - 1);
	barrier_var(k);
	k &= MP_NR_CLASSES - 1;
	bit = 1U << k;
	ctr = rss_counter(mm, k);
	ch->size = -1;
	ch->amount = 0;
	if (!ctr)
		return -1;
	count = ctr->count;
	if (!whole && (pc->seen & bit) && count == pc->count[k]) {
		cpu = bpf_get_smp_processor_id();
		if (cpu >= MP_MAX_CPUS || bpf_probe_read_kernel(&own, sizeof(own),
				(void *)((__u64)ctr->counters + pcpu_off[cpu & (MP_MAX_CPUS - 1)])))
			return -1;
		/*
		 * A part of 0 may be this CPU's own fold, with other CPUs' folds since that
		 * took count back to where it was: sum.
		 */
		if (own) {
			ch->amount = (__s64)(own - pc->local[k]) << 12;
			pc->local[k] = own;
			pc->part[k] += ch->amount;
			return 0;
		}
	}
	sum = pcpu_sum(ctr, &count, &own);
	if (sum == -1)
		return -1;
	mm_sizes(e, v);
	ch->size = sum << 12;
	ch->amount = ch->size - v[k];
	pc->count[k] = count;
	pc->local[k] = own;
	pc->seen |= bit;
	pc->part[k] += ch->amount;
	return 0;
}

/* rss_stat's: its mm is the tracepoint's argument, trusted */
__noinline int rss_amount(struct mm_struct *mm __arg_trusted, __u32 member, struct mp_mm *e,
			  struct mp_mm_pc *pc, struct rss_change *ch)
{
	return rss_amount_of(mm, member, e, pc, ch);
}

/*
 * One change of class member's size of a resolved mm, amount bytes (size: the size after
 * it when the event summed the counter, else -1): the baseline of an mm attached to or
 * forked, or growth (the phase's, and in the target's own context, curr, its mapping's
 * and stack samples') or shrink (keeping the peaks, which can only have been reached just
 * before it). ts: the thread's state when curr (NULL if it has none yet); kmm: the
 * kernel's mm (current's when curr).
 */
static __always_inline void rss_account(void *ctx, struct mp_mm *mm, struct mm_struct *kmm,
					struct mp_target *t, __u32 tgid, int member,
					__s64 amount, __s64 size, __u32 curr,
					struct thread_state *ts)
{
	struct mp_phase_stats *s;
	__s64 v[MP_NR_CLASSES], old, total, floor;
	__u32 bit;

	bit = 1U << member;
	member &= MP_NR_CLASSES - 1;
	if (!(mm->seeded & bit)) {
		/* attached or forked: the first exact value is the baseline */
		__sync_fetch_and_or(&mm->seeded, bit);
		if ((t->flags & MP_T_FORKED) && size >= 0)
			mm->floor[member] = size;
		return;
	}
	/* its own mm: the RSS phase events carry (a write only when it changes) */
	if (curr && mm->tgid == tgid && t->own_mm != mm->mm_id)
		t->own_mm = mm->mm_id;
	if (!amount)
		return;
	s = stats_get(t->phase);
	if (!s)
		return;
	if (amount < 0) {
		mm_sizes(mm, v);
		size = v[member];
		old = size - amount;
		if (old > mm->peak[member])
			mm->peak[member] = old;
		total = v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
		if (member != MP_SWAP && total - amount > mm->peak_total)
			mm->peak_total = total - amount;
		/* a forked child giving back what it inherited never grew it here */
		floor = mm->floor[member];
		if (size < floor)
			mm->floor[member] = size;
		if (old > floor) {
			s->shrink[member] += old - (size > floor ? size : floor);
			ivl_shrink_add(t, tgid, member, old - (size > floor ? size : floor));
		}
		return;
	}
	if (cfg.max_rss_bytes && curr) {
		mm_sizes(mm, v);
		total = v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
		if (total > cfg.max_rss_bytes)
			guard_trip(t, tgid, total);
	}
	s->growth[member] += amount;
	call_add(t, tgid, member, amount);
	if (member == MP_SWAP)
		return;	/* swap-out happens in reclaim, not in the target's code */
	if (!curr)
		return;	/* not in the target's context: no mapping, no stack */
	if (cfg.map_tracking || cfg.stack_mode) {
		if (!ts)
			ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
						  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (cfg.map_tracking && ts)
			mapping_add(ts, kmm, tgid, (__u64)t->phase << 32 | member, amount);
		if (cfg.stack_mode && ts)
			stack_account(ctx, ts, tgid, t->phase, member, amount);
	}
}

/*
 * rss_stat fires at every change of an RSS counter of an mm (the BTF tracepoint: the mm and
 * the counter; the classic one would sum the per-CPU counter under its lock for every
 * process on the machine). The change comes from this CPU's part of the counter, the whole
 * counter summed only at a fold (rss_amount()). The mm is current's (curr) or not (reclaim,
 * exit teardown, fork copy): then it is found by its id, learnt from earlier curr events.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	struct thread_state *ts = NULL;
	struct mp_target *t = NULL;
	struct mp_mm_pc *pc;
	struct mp_mm *e;
	__u32 tgid = 0, mm_id, curr;
	struct rss_change ch;

	if (member < 0 || member >= MP_NR_CLASSES)
		return 0;
	/*
	 * The common case first: an event of a process that is not a target. current->mm is
	 * read here only: a pointer read from a trusted one costs the verifier a walk of the
	 * kernel's BTF (~1 ms) at every visit; when curr, mm is current's.
	 */
	curr = bpf_get_current_task_btf()->mm == mm;
	if (curr && !(t = target_of_current(&tgid)))
		return 0;
	mm_id = mm_id_of(mm);
	e = curr ? rss_mm_current(mm, mm_id, &t, &tgid) : rss_mm_foreign(mm_id, &t, &tgid);
	if (!e || !t)
		return 0;
	pc = share_get(e);
	if (!pc)
		return 0;
	if (rss_amount(mm, member, e, pc, &ch)) {
		struct mp_drops *d = drops_get();

		if (d)
			d->rss_unread++;
		return 0;
	}
	if (curr && cfg.map_tracking)
		ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	rss_account(ctx, e, mm, t, tgid, member, ch.amount, ch.size, curr, ts);
	return 0;
}

/*
 * Sums the counters of the current target's own address space into its shares: a change
 * that no event of the target brought yet (made in another context, or whose event ran on
 * another CPU than its change) counts in the phase that is ending, not in the next one.
 * At phase changes (after the exit, the teardown's sums at its folds take it, same phase).
 * A global subprogram: verified once per program, not at each of its callers (inlined in
 * the markers' programs and the exit's, it cost the start ~60 ms).
 */
__noinline int rss_sync(struct mp_target *t, __u32 tgid)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	struct rss_change ch;
	struct mp_mm_pc *pc;
	struct mp_mm *e;
	int k;

	if (!t || !mm)
		return 0;
	e = mm_lookup(mm_id_of(mm));
	if (!e || e->tgid != tgid || e->gen != t->mm_gen || !(e->seeded & MP_MM_READY))
		return 0;
	pc = share_get(e);
	if (!pc)
		return 0;
	for (k = 0; k < MP_NR_CLASSES; k++)
		if (!rss_amount_of(mm, k | RSS_WHOLE, e, pc, &ch))
			rss_account(NULL, e, mm, t, tgid, k, ch.amount, ch.size, 0, NULL);
	return 0;
}

/* ---- address-space syscalls ---- */

static __always_inline int inflight_save(__u64 len, __u64 len2, __u32 prot, __s32 fd)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight in = { .len = len, .len2 = len2, .prot = prot, .fd = fd };

	if (!target_of_current(NULL))
		return 0;
	bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY);
	return 0;
}

static __always_inline bool inflight_take(struct inflight *out)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *in = bpf_map_lookup_elem(&inflight, &tid);

	if (!in)
		return false;
	*out = *in;
	bpf_map_delete_elem(&inflight, &tid);
	return true;
}

static __always_inline bool sys_failed(long ret)
{
	return (unsigned long)ret >= (unsigned long)-MAX_ERRNO;
}

struct vma_file {
	__u64 ino;
	__u64 dev;
	__u64 start;
};

static long vma_file_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_file *vf = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	vf->start = BPF_CORE_READ(vma, vm_start);
	if (!f)
		return 0;
	vf->ino = BPF_CORE_READ(f, f_inode, i_ino);
	vf->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	return 0;
}

/*
 * A target mapped a file. Code (a library loaded at start-up or by dlopen): if the file
 * is new, user space probes its phase markers and, in run mode, the target stops until
 * the probes are in place so no marker call is missed. Data (the model file): user space
 * learns its path while the process lives, to name the mapping later.
 */
static __always_inline void map_notice(__u32 tgid, struct mp_target *t, __u64 addr, bool exec)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_file vf = {};
	struct file_key key;
	struct mp_event *e;
	__u8 one = 1;

	if (bpf_find_vma(task, addr, vma_file_cb, &vf, 0) || !vf.ino)
		return;
	key.ino = vf.ino;
	key.dev = vf.dev;
	key.exec = exec;
	if (bpf_map_update_elem(&seen_files, &key, &one, BPF_NOEXIST))
		return;		/* seen before (or map full: nothing more to do) */
	e = event_new(exec ? MP_EV_EXEC_MAP : MP_EV_FILE_MAP, tgid, t->phase);
	if (!e)
		return;
	e->addr = vf.start;
	e->ino = vf.ino;
	e->dev = vf.dev;
	if (exec && stop_on_map) {
		__sync_fetch_and_or(&t->flags, MP_T_HELD);
		bpf_send_signal(SIGSTOP);
	}
	/* wake user space at once: the path is read from /proc/PID/maps while it lives */
	event_submit(e, true);
}

/*
 * mmap, munmap, mremap and brk through the raw syscall tracepoints: two links instead of
 * seven perf tracepoints (each of which takes ~90 ms to detach), and the syscall number
 * is checked before any map lookup.
 */
static __always_inline void sys_exit_mmap(void *ctx, long ret)
{
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;
	__u32 tgid;

	if (!inflight_take(&in))
		return;
	t = target_of_current(&tgid);
	if (!t || sys_failed(ret))
		return;
	s = stats_get(t->phase);
	if (s) {
		s->mmap_bytes += in.len;
		hist_add(s, MP_HIST_MMAP_SIZE, in.len);
	}
	__sync_fetch_and_add(&t->ivl_map[MP_IVL_MMAP], in.len);
	if (in.fd >= 0)
		map_notice(tgid, t, ret, in.prot & PROT_EXEC);
	origin_send(ctx, tgid, t, ret, in.len, in.prot, MP_ORIGIN_MMAP);
}

static __always_inline void sys_exit_munmap(long ret)
{
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;

	if (!inflight_take(&in) || ret)
		return;
	t = target_of_current(NULL);
	if (!t)
		return;
	s = stats_get(t->phase);
	if (s)
		s->munmap_bytes += in.len;
	__sync_fetch_and_add(&t->ivl_map[MP_IVL_MUNMAP], in.len);
}

static __always_inline void sys_exit_mremap(void *ctx, long ret)
{
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;
	__u32 tgid;

	if (!inflight_take(&in) || sys_failed(ret))
		return;
	t = target_of_current(&tgid);
	if (!t)
		return;
	/* protection unknown here (mremap keeps the old one); user space reads 0 as such */
	origin_send(ctx, tgid, t, ret, in.len2, 0, MP_ORIGIN_MREMAP);
	s = stats_get(t->phase);
	if (!s)
		return;
	if (in.len2 > in.len) {
		s->mmap_bytes += in.len2 - in.len;
		hist_add(s, MP_HIST_MMAP_SIZE, in.len2);
		__sync_fetch_and_add(&t->ivl_map[MP_IVL_MMAP], in.len2 - in.len);
	} else {
		s->munmap_bytes += in.len - in.len2;
		__sync_fetch_and_add(&t->ivl_map[MP_IVL_MUNMAP], in.len - in.len2);
	}
}

static __always_inline void sys_exit_brk(void *ctx, __u64 ret)
{
	struct mp_phase_stats *s;
	struct mp_target *t;
	__u32 tgid;
	__u64 last;

	t = target_of_current(&tgid);
	if (!t)
		return;
	last = t->last_brk;
	t->last_brk = ret;
	/* the first brk of an exec'd image (or after attach) only sets the baseline */
	if (!last || ret == last)
		return;
	/* the heap's origin: the stack of its first growth */
	if (ret > last && !(t->flags & MP_T_HEAP_ORIGIN)) {
		__sync_fetch_and_or(&t->flags, MP_T_HEAP_ORIGIN);
		origin_send(ctx, tgid, t, last, ret - last, 3, MP_ORIGIN_BRK);
	}
	s = stats_get(t->phase);
	if (!s)
		return;
	if (ret > last) {
		s->brk_bytes += ret - last;
		__sync_fetch_and_add(&t->ivl_map[MP_IVL_BRK], ret - last);
	} else {
		s->brk_shrink_bytes += last - ret;
		__sync_fetch_and_add(&t->ivl_map[MP_IVL_BRK_SHRINK], last - ret);
	}
}

/*
 * An address-space syscall that may populate pages while it holds the address space locked
 * (MAP_POPULATE or MAP_LOCKED mmap, MADV_POPULATE_*, mlock, mlock2, mlockall, mprotect or
 * mremap of locked memory, brk under mlockall): its growth waits in the thread (see
 * mapping_add) for the range the syscall names, [lo, lo + len) here, or known at its exit
 * from its return value (lo == 0: mmap and mremap, of len bytes; brk). Growth that waited
 * for a lookup is tried first, while the address space is still free.
 */
static __always_inline int sys_window_open(long id, __u64 lo, __u64 len)
{
	struct thread_state *ts;
	__u32 tgid;

	if (!cfg.map_tracking || !target_of_current(&tgid))
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts)
		return 0;
	if (ts->ndeferred)
		deferred_resolve(ts, tgid);
	ts->sys_nr = id + 1;
	ts->sys_lo = lo & ~4095ULL;
	ts->sys_hi = len;
	if (lo)
		ts->sys_hi = (lo + len + 4095) & ~4095ULL;
	ts->fault_addr = 0;
	return 0;
}

/*
 * Any syscall's exit in a target thread: the growth of an address-space syscall gets its
 * range (a failed one's cannot be placed: [unknown]), and growth waiting for a lookup is
 * looked up, the address space being free of this thread's lock.
 */
static __always_inline void sys_window_close(long id, long ret)
{
	struct thread_state *ts;
	struct mp_target *t;
	__u64 lo, hi;
	__u32 tgid;
	int i;

	if (!cfg.map_tracking)
		return;
	t = target_of_current(&tgid);
	if (!t)
		return;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  (t->flags & MP_T_ORPHANS) ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!ts)
		return;
	if (t->flags & MP_T_ORPHANS)
		orphans_adopt(ts, t, tgid);
	if (ts->sys_nr) {
		lo = ts->sys_lo;
		hi = ts->sys_hi;
		if (sys_failed(ret)) {
			lo = 4096;	/* no mapping holds [4096, ~0): charged to [unknown] */
			hi = ~0ULL;
		} else if (ts->sys_nr == __NR_brk + 1) {
			lo = ((__u64)ret - 1) & ~4095ULL;	/* the heap's last page */
			hi = lo + 4096;
		} else if (!lo) {
			lo = ret;
			hi = ((__u64)ret + hi + 4095) & ~4095ULL;
		}
		ts->sys_nr = 0;
		for (i = 0; i < MAX_DEFERRED; i++) {
			if (ts->deferred[i].bytes && !ts->deferred[i].hi) {
				ts->deferred[i].lo = lo;
				ts->deferred[i].hi = hi;
			}
		}
	}
	if (ts->ndeferred)
		deferred_resolve(ts, tgid);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	/* regs is the kernel's own pointer here: plain loads, no probe-read calls (these
	 * programs run for every syscall on the machine) */
	switch (id) {
	case __NR_mmap:
		/* x86-64 syscall arguments: rdi, rsi, rdx, r10, r8, r9 */
		sys_window_open(id, 0, regs->si);
		return inflight_save(regs->si, 0, regs->dx, (__s32)regs->r8);
	case __NR_munmap:
		sys_window_open(id, regs->di, regs->si);
		return inflight_save(regs->si, 0, 0, -1);
	case __NR_mremap:
		sys_window_open(id, 0, regs->dx);
		return inflight_save(regs->si, regs->dx, 0, -1);
	case __NR_brk:
		return sys_window_open(id, 0, 0);
	case __NR_mprotect:
	case __NR_madvise:
	case __NR_mlock:
	case __NR_mlock2:
		return sys_window_open(id, regs->di, regs->si);
	case __NR_mlockall:
		/* every mapping at once: its growth cannot be placed ([unknown]) */
		return sys_window_open(id, 4096, (1ULL << 47) - 4096);
	default:
		return 0;
	}
}

__noinline int target_leave_current(__u32 why, __u64 path);

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	long id = regs->orig_ax;

	switch (id) {
	case __NR_mmap:
		sys_exit_mmap(ctx, ret);
		break;
	case __NR_munmap:
		sys_exit_munmap(ret);
		break;
	case __NR_mremap:
		sys_exit_mremap(ctx, ret);
		break;
	case __NR_brk:
		sys_exit_brk(ctx, ret);
		break;
	case __NR_prctl:
		/* the process asks not to be ptraced: nor is it observed */
		if (!ret && regs->di == PR_SET_DUMPABLE && !regs->si && observer.check)
			target_leave_current(MP_LEFT_PRCTL, 0);
		break;
	}
	sys_window_close(id, ret);
	return 0;
}

/* ---- the invoking user's reach ---- */

/*
 * The current process leaves the observation (why: MP_LEFT_* bits, path: the kernel's
 * address of the program an exec runs, or 0): from now on nothing of it counts or is sampled, as if it had
 * exited, and its later children are not followed. What it did before stays, and the
 * event tells user space, which reads no more of its /proc files. A global subprogram,
 * as it is rare.
 */
__noinline int target_leave_current(__u32 why, __u64 path)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_target *t = target_lookup(tgid);
	struct mp_event *e;

	if (!t || (t->flags & MP_T_EXITED))
		return 0;
	/* a hold (new code to probe) would not be released: the target is no longer ours */
	__sync_fetch_and_or(&t->flags, MP_T_LEFT | MP_T_EXITED);
	call_flush(t, tgid);
	e = event_new(MP_EV_LEFT, tgid, t->phase);
	if (!e)
		return 0;
	e->arg = why;
	if (path)
		bpf_probe_read_kernel_str(e->path, sizeof(e->path), (const void *)path);
	/* what its image held when it left */
	event_rss(e, t, tgid);
	event_submit(e, true);
	return 0;
}

/* What in credentials c puts a process out of the observer's reach (MP_LEFT_* bits). */
static __always_inline __u32 cred_out_of_reach(const struct cred *c)
{
	__u32 why = 0, uid = observer.uid, gid = observer.gid;

	if (!c)
		return 0;
	if (BPF_CORE_READ(c, uid.val) != uid || BPF_CORE_READ(c, euid.val) != uid ||
	    BPF_CORE_READ(c, suid.val) != uid || BPF_CORE_READ(c, fsuid.val) != uid)
		why |= MP_LEFT_UIDS;
	if (BPF_CORE_READ(c, gid.val) != gid || BPF_CORE_READ(c, egid.val) != gid ||
	    BPF_CORE_READ(c, sgid.val) != gid || BPF_CORE_READ(c, fsgid.val) != gid)
		why |= MP_LEFT_GIDS;
	if (BPF_CORE_READ(c, cap_permitted.val) || BPF_CORE_READ(c, cap_effective.val) ||
	    BPF_CORE_READ(c, cap_ambient.val))
		why |= MP_LEFT_CAPS;
	return why;
}

/*
 * An exec the invoking user could not ptrace afterwards: its credentials (computed by
 * now, bprm->cred) are not theirs, or give it capabilities, or the exec is a secure one.
 * Checked before the old image is flushed, so nothing of the new one is ever counted or
 * sampled (kernels since 6.10; before, handle_exec's checks catch it once it ran).
 */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(handle_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, why;
	struct mp_target *t;

	if (!observer.check)
		return 0;
	t = target_lookup(tgid);
	if (!t || (t->flags & MP_T_EXITED))
		return 0;
	why = cred_out_of_reach(BPF_CORE_READ(bprm, cred));
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		why |= MP_LEFT_SECURE;
	if (BPF_CORE_READ(bprm, interp_flags) & BINPRM_FLAGS_ENFORCE_NONDUMP)
		why |= MP_LEFT_NODUMP;
	if (why)
		target_leave_current(why, (__u64)BPF_CORE_READ(bprm, filename));
	return 0;
}

/* ---- process life cycle ---- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct mp_target *pt, ct = {};
	struct mp_event *e;

	if (ptgid == ctgid)
		return 0;	/* a new thread, not a new process */
	pt = target_lookup(ptgid);
	if (!pt || (pt->flags & (MP_T_WAIT_EXEC | MP_T_EXITED)))
		return 0;
	ct.phase = pt->phase;
	ct.parent = ptgid;
	ct.tgid = ctgid;
	ct.flags = MP_T_FORKED;
	if (target_add(ctgid, &ct)) {
		struct mp_drops *d = drops_get();

		if (d)
			d->targets_full++;
		return 0;
	}
	e = event_new(MP_EV_FORK, ptgid, pt->phase);
	if (!e)
		return 0;
	e->arg = ctgid;
	event_submit(e, false);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_target *t = target_lookup(tgid);
	struct file_key key = {};
	struct mp_event *e;
	__u8 one = 1;

	if (!t || (t->flags & MP_T_EXITED))
		return 0;
	/* the kernel made the new image not dumpable (a program the user cannot read), or
	 * (without sched_prepare_exec) its new credentials are out of the user's reach */
	if (observer.check) {
		struct mm_struct *mm = BPF_CORE_READ(p, mm);
		__u32 why = cred_out_of_reach(BPF_CORE_READ(p, cred));
		__u64 mmf = 0;

		if (mm && !bpf_core_read(&mmf, sizeof(mmf), &mm->flags) &&
		    (mmf & MMF_DUMPABLE_MASK) != SUID_DUMP_USER)
			why |= MP_LEFT_NODUMP;
		if (why) {
			target_leave_current(why, (__u64)BPF_CORE_READ(bprm, filename));
			return 0;
		}
	}
	__sync_fetch_and_and(&t->flags, ~(MP_T_WAIT_EXEC | MP_T_FORKED | MP_T_HEAP_ORIGIN));
	__sync_fetch_and_or(&t->flags, MP_T_FRESH_MM);
	t->mm_gen++;
	t->last_brk = 0;
	e = event_new(MP_EV_EXEC, tgid, t->phase);
	if (!e)
		return 0;
	/*
	 * The kernel maps the new program itself (no mmap): if its file is new, user space
	 * probes its markers, holding the target in run mode (e->arg = 1) until then.
	 */
	key.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	key.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	key.exec = 1;
	if (!bpf_map_update_elem(&seen_files, &key, &one, BPF_NOEXIST)) {
		e->ino = key.ino;
		e->dev = key.dev;
		if (stop_on_map) {
			__sync_fetch_and_or(&t->flags, MP_T_HELD);
			bpf_send_signal(SIGSTOP);
			e->arg = 1;
		}
	}
	event_submit(e, true);
	return 0;
}

/*
 * A thread ends: what waits for a lookup is looked up (the last thread adopts what the
 * others left); what cannot be, goes to the process's other threads, or to [unknown]
 * when this was the last one.
 */
__noinline int thread_end(struct thread_state *ts, struct mp_target *t, __u32 tgid,
				 bool group_dead)
{
	int i;

	if (!ts || !t)
		return 0;
	for (i = 0; i < 3; i++) {
		if (group_dead && (t->flags & MP_T_ORPHANS))
			orphans_adopt(ts, t, tgid);
		if (!ts->ndeferred || deferred_resolve(ts, tgid))
			break;
	}
	if (!group_dead) {
		for (i = 0; i < MAX_DEFERRED; i++) {
			struct deferred *d = &ts->deferred[i];

			/* a syscall's growth without its range (killed in it) cannot be placed */
			if (d->bytes && d->hi && orphan_leave(t, tgid, d)) {
				d->bytes = 0;
				ts->ndeferred--;
			}
		}
	}
	if (ts->ndeferred)
		deferred_drop(ts, tgid);
	mapping_flush(ts);
	maplog_send(ts);
	return 0;
}

/*
 * Every thread's mapping growth that it still holds (its last batched bytes and its batch
 * for user space) goes out: run by user space before its last read of the mappings. A
 * thread ends or changes mapping to send its own, but an attached process's threads keep
 * running after memphase stops. A thread running meanwhile may add an entry while it is
 * sent: that entry may be sent twice or not at all.
 */
SEC("iter/task")
int flush_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct thread_state *ts;

	if (!task || !cfg.map_tracking)
		return 0;
	ts = bpf_task_storage_get(&threads, task, NULL, 0);
	if (!ts)
		return 0;
	mapping_flush(ts);
	maplog_send(ts);
	return 0;
}

/*
 * Attach: the process's exact sizes, read before any of its events counts (its target is
 * added with MP_T_SEEDING, which this clears), so that each class's first event is growth
 * like any other instead of the baseline (whose own page would be lost). Run by user space
 * over every task (collect__seed_attach()); seed_tgid names the process, and is cleared
 * once its address space is seeded. Where the kernel's counters cannot be summed, the
 * entry is left to the first events as before.
 */
__u32 seed_tgid;

SEC("iter/task")
int seed_attach(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	const struct percpu_counter *ctr;
	__s64 count, sum, v[MP_NR_CLASSES];
	struct mm_struct *mm;
	struct mp_target *t;
	__u32 tgid = seed_tgid, mm_id;
	struct mp_mm *e;
	__s32 own;
	bool mine;
	int c;

	if (!task || !tgid || task->tgid != tgid)
		return 0;
	t = target_lookup(tgid);
	if (!t || !(t->flags & MP_T_SEEDING))
		return 0;
	/* a thread without one (a leader that exited before its threads): the next */
	mm = task->mm;
	if (!mm)
		return 0;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		ctr = rss_counter(mm, c);
		sum = ctr ? pcpu_sum(ctr, &count, &own) : -1;
		if (sum == -1)
			return 0;
		v[c] = sum > 0 ? sum << 12 : 0;
	}
	mm_id = mm_id_of(mm);
	e = mm_claim(mm_id, tgid, &mine);
	if (!e || !mine)
		return 0;
	t->own_mm = mm_id;
	mm_set(e, t, v, (1 << MP_NR_CLASSES) - 1);
	__sync_fetch_and_and(&t->flags, ~MP_T_SEEDING);
	seed_tgid = 0;
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, tid;
	struct thread_state *ts;
	struct mp_target *t;
	struct mp_event *e;

	t = target_lookup(tgid);
	/* every exiting thread hands in what it batched, and what waits for a lookup */
	ts = bpf_task_storage_get(&threads, task, NULL, 0);
	if (ts && t)
		thread_end(ts, t, tgid, group_dead);
	/* a target thread that dies inside an allocation call: its tid may come back */
	if (t) {
		tid = (__u32)bpf_get_current_pid_tgid();
		bpf_map_delete_elem(&alloc_calls, &tid);
	}
	if (!group_dead)
		return 0;
	bpf_map_delete_elem(&orphans, &tgid);
	if (!t || (t->flags & MP_T_EXITED))
		return 0;
	__sync_fetch_and_or(&t->flags, MP_T_EXITED);
	call_flush(t, tgid);
	e = event_new(MP_EV_EXIT, tgid, t->phase);
	if (!e)
		return 0;
	/* wait(2)-style status: the exit code << 8, or the killing signal */
	e->arg = BPF_CORE_READ(task, signal, group_exit_code);
	if (!e->arg)
		e->arg = BPF_CORE_READ(task, exit_code);
	/* before exit_mm(): what it held at the end, not its teardown */
	event_rss(e, t, tgid);
	event_submit(e, true);
	return 0;
}

/*
 * Was it the memory cgroup? A cgroup OOM kill happens when a charge finds the victim's
 * memory cgroup (or an ancestor) at its limit: look for one whose usage is within
 * 64 pages of its max.
 */
static __always_inline void oom_memcg(struct task_struct *victim, struct mp_event *e)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	/* read, not loaded: a pointer loaded from a trusted one costs the verifier walks of
	 * the kernel's BTF (~1 ms a visit); an OOM kill is no hot path */
	struct css_set *cset = BPF_CORE_READ(victim, cgroups);
	int i;

	if (!cset || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return;
	bpf_probe_read_kernel(&css, sizeof(css), &cset->subsys[id]);
	for (i = 0; i < 8 && css; i++) {
		/* css is the first member of struct mem_cgroup */
		struct mem_cgroup *memcg = (struct mem_cgroup *)css;
		__u64 max = BPF_CORE_READ(memcg, memory.max);
		__s64 usage = BPF_CORE_READ(memcg, memory.usage.counter);

		if (max < (1ULL << 50) && usage + 64 >= (__s64)max) {
			e->cg_id = BPF_CORE_READ(css, cgroup, kn, id);
			e->cg_limit = max << 12;
			bpf_probe_read_kernel_str(e->cg_name, sizeof(e->cg_name),
						  BPF_CORE_READ(css, cgroup, kn, name));
			return;
		}
		css = BPF_CORE_READ(css, parent);
	}
}

SEC("tp_btf/mark_victim")
int BPF_PROG(handle_mark_victim, struct task_struct *victim, uid_t uid)
{
	__u32 tgid = victim->tgid;
	struct mp_target *t = target_lookup(tgid);
	/* pointers read, not loaded, from victim (see oom_memcg()) */
	struct mm_struct *mm = BPF_CORE_READ(victim, mm);
	struct mp_event *e;

	/* one that left the observation is not the user's to see */
	if (!t || (t->flags & MP_T_LEFT))
		return 0;
	e = event_new(MP_EV_OOM, tgid, t->phase);
	if (!e)
		return 0;
	/* current is whoever ran out of memory, not the victim */
	e->tid = victim->pid;
	if (mm) {
		e->rss[MP_ANON] = mm_counter(mm, MM_ANONPAGES);
		e->rss[MP_FILE] = mm_counter(mm, MM_FILEPAGES);
		e->rss[MP_SHMEM] = mm_counter(mm, MM_SHMEMPAGES);
		e->rss[MP_SWAP] = mm_counter(mm, MM_SWAPENTS);
	}
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), victim->comm);
	oom_memcg(victim, e);
	event_submit(e, true);
	return 0;
}

/* ---- memory pressure: time target threads spend reclaiming memory themselves ---- */

static __always_inline int reclaim_begin(void)
{
	struct thread_state *ts;

	if (!target_of_current(NULL))
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->reclaim_start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int reclaim_end(unsigned long nr_reclaimed)
{
	struct mp_phase_stats *s;
	struct thread_state *ts;
	struct mp_target *t;
	__u64 start;

	t = target_of_current(NULL);
	if (!t)
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (!ts || !ts->reclaim_start_ns)
		return 0;
	start = ts->reclaim_start_ns;
	ts->reclaim_start_ns = 0;
	s = stats_get(t->phase);
	if (!s)
		return 0;
	s->reclaim_ns += bpf_ktime_get_ns() - start;
	s->reclaim_count++;
	s->reclaimed_pages += nr_reclaimed;
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(handle_reclaim_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(handle_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}

/* Reaching a memory cgroup's limit makes the charging thread reclaim in the cgroup. */
SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(handle_memcg_reclaim_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(handle_memcg_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}

/* ---- phase markers ---- */

/* libbpf 1.1 names five arguments; the x86-64 ABI passes the sixth in r9 (libbpf 1.2 has it) */
#if !defined(PT_REGS_PARM6_CORE) && defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6_CORE(x) BPF_CORE_READ((struct pt_regs *)(x), r9)
#endif

/* Integer argument n (1..6) at function entry. */
static __always_inline __u64 rule_arg(struct pt_regs *ctx, __u32 n)
{
	/* probe reads, one per case: the compiler would fold direct ctx loads into a
	 * computed ctx offset, which the verifier refuses */
	switch (n) {
	case 1:
		return PT_REGS_PARM1_CORE(ctx);
	case 2:
		return PT_REGS_PARM2_CORE(ctx);
	case 3:
		return PT_REGS_PARM3_CORE(ctx);
	case 4:
		return PT_REGS_PARM4_CORE(ctx);
	case 5:
		return PT_REGS_PARM5_CORE(ctx);
#ifdef PT_REGS_PARM6_CORE
	case 6:
		return PT_REGS_PARM6_CORE(ctx);
#endif
	}
	return 0;
}

/* Scratch for a rule's array (MP_RULE_MAX_ARRAY bytes: too big for the BPF stack). */
struct rule_buf {
	__u64 w[MP_RULE_MAX_ARRAY / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rule_buf);
} rule_bufs SEC(".maps");

/* Non-zero bytes of a word: fold each byte's bits into its low bit, then add the bytes. */
static __always_inline __u32 word_nonzero(__u64 x)
{
	x |= x >> 4;
	x |= x >> 2;
	x |= x >> 1;
	x &= 0x0101010101010101ULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* What a marker call's rule found: the phase it enters, the value and the array's count. */
struct rule_out {
	__u32 phase;
	__u32 record;
	__u64 value;
	__u64 nonzero;
	__u64 pos;		/* seq << 32 | position + 1 of the last token, 0: unknown */
};

/*
 * The last token's position and sequence (see mp_rule.pos_at) of a call with n tokens: seq
 * << 32 | position + 1, or 0 when it cannot be read (no arrays: llama_batch_get_one).
 */
__noinline __u64 rule_last_pos(struct pt_regs *ctx, __u32 idx, __s64 n)
{
	const volatile struct mp_rule *r;
	__u64 ptr = 0, sptr = 0;
	__s32 pos = -1, seq = 0;

	if (!ctx || idx >= MP_MAX_RULES || n <= 0 || n > (1 << 20))
		return 0;
	r = &cfg.rules[idx];
	if (!r->pos_at ||
	    bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->pos_at)) || !ptr ||
	    bpf_probe_read_user(&pos, 4, (void *)(ptr + 4 * (n - 1))) || pos < 0)
		return 0;
	if (r->seq_at &&
	    !bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->seq_at)) && ptr &&
	    !bpf_probe_read_user(&sptr, 8, (void *)(ptr + 8 * (n - 1))) && sptr)
		bpf_probe_read_user(&seq, 4, (void *)sptr);
	return (__u64)(__u32)seq << 32 | ((__u64)pos + 1);
}

/*
 * Counts the non-zero bytes among the first n of the array whose pointer is at sp + r->arr_at
 * (r: rule idx); -1 when there is no array (NULL pointer, n <= 0, unreadable). A subprogram:
 * its loop is verified once, not on every path of the rule's evaluation.
 */
__noinline long rule_array_count(struct pt_regs *ctx, __u32 idx, __s64 n)
{
	const volatile struct mp_rule *r;
	struct rule_buf *buf;
	__u32 zero = 0, i, len;
	__u64 ptr = 0;
	long cnt = 0;

	if (!ctx || idx >= MP_MAX_RULES)
		return -1;
	r = &cfg.rules[idx];
	if (bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->arr_at)) || !ptr)
		return -1;
	if (n <= 0)
		return -1;
	/* trimmed only where entries are left: a one-entry array counts its one */
	if (n > r->arr_trim)
		n -= r->arr_trim;
	if (n > MP_RULE_MAX_ARRAY)
		n = MP_RULE_MAX_ARRAY;
	buf = bpf_map_lookup_elem(&rule_bufs, &zero);
	if (!buf)
		return -1;
	len = (__u32)n;
	/* bounded for the verifier: 1..MP_RULE_MAX_ARRAY */
	if (len < 1 || len > MP_RULE_MAX_ARRAY)
		return -1;
	if (bpf_probe_read_user(buf->w, len, (void *)ptr))
		return -1;
	/* a word at a time (the verifier walks 32 steps, not 256); the last one masked */
	for (i = 0; i < MP_RULE_MAX_ARRAY / 8; i++) {
		__u64 w;

		if (i * 8 >= len)
			break;
		w = buf->w[i];
		if (len - i * 8 < 8)
			w &= (1ULL << ((len - i * 8) * 8)) - 1;
		cnt += word_nonzero(w);
	}
	return cnt;
}

/*
 * The phase a marker call enters by its argument rule (see struct mp_rule): read the value,
 * compare (mp_rule__hit), pick then or else; or by the array's count; a guard on the phases
 * the target has entered so far overrides both. A value that cannot be read (stack memory
 * not present) compares as 0.
 */
static __always_inline void rule_phase(struct pt_regs *ctx, __u32 idx, __u32 seen,
				       struct rule_out *o)
{
	/* volatile: the values are set by user space after compilation */
	const volatile struct mp_rule *r;
	__u64 v = 0;
	long cnt;
	int hit;

	/* the index comes from the cookie: bound it for the verifier */
	if (idx >= MP_MAX_RULES)
		return;
	r = &cfg.rules[idx];
	if (r->src == MP_SRC_STACK) {
		void *at = (void *)(PT_REGS_SP(ctx) + r->at);

		if (r->width == 8)
			bpf_probe_read_user(&v, 8, at);
		else
			bpf_probe_read_user(&v, 4, at);
	} else {
		v = rule_arg(ctx, r->at);
	}
	if (r->width != 8)
		v = r->is_signed ? (__u64)(__s64)(__s32)v : (__u64)(__u32)v;
	o->value = r->rec_arg ? rule_arg(ctx, r->rec_arg) : v;
	o->record = r->record;
	hit = mp_rule__hit(r->op, r->width, r->is_signed, v, r->value);
	o->phase = hit ? r->then_phase : r->else_phase;
	if (r->arr_at) {
		cnt = rule_array_count(ctx, idx, (__s64)v);
		if (cnt >= 0) {
			__s64 n = (__s64)v > r->arr_trim ? (__s64)v - r->arr_trim : (__s64)v;

			if (n > MP_RULE_MAX_ARRAY)
				n = MP_RULE_MAX_ARRAY;
			if (n < 0)
				n = 0;
			o->phase = cnt == n ? r->all_phase : cnt ? r->mixed_phase : r->none_phase;
			/* all: every entry (the uncounted ones too) */
			o->nonzero = cnt == n ? v : cnt;
		}
	}
	if (r->pos_at)
		o->pos = rule_last_pos(ctx, idx, (__s64)v);
	if (r->guard_mask && !(seen & r->guard_mask) &&
	    (!r->guard_max || mp_rule__hit(MP_OP_LE, r->width, r->is_signed, v, r->guard_max)))
		o->phase = r->guard_phase;
}

/* Switches a target's phase: counts the entry, sends MP_EV_PHASE (also for a recorded value
 * without a change, so that each call's value arrives). */
static __always_inline void phase_enter(struct mp_target *t, __u32 tgid, __u32 phase,
					const struct rule_out *o)
{
	__u64 g[MP_NR_CLASSES] = {}, sh[MP_NR_CLASSES] = {}, mp[MP_NR_IVL_MAP] = {}, faults = 0;
	struct mp_phase_stats *s;
	struct mp_event *e;
	__u32 old = t->phase, c;

	phase &= MP_MAX_PHASES - 1;
	if (phase == old && (!o || !o->record))
		return;
	if (phase != old) {
		t->phase = phase;
		t->seen |= 1U << phase;
		s = stats_get(phase);
		if (s)
			s->entries++;
		/* the old phase's interval ends: take what it counted (lost if the event is) */
		rss_sync(t, tgid);
		ivl_take(t, tgid, &faults, g, sh, mp);
	}
	e = event_new(MP_EV_PHASE, tgid, old);
	if (!e)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		e->ivl_growth[c] = g[c];
		e->ivl_shrink[c] = sh[c];
	}
	for (c = 0; c < MP_NR_IVL_MAP; c++)
		e->ivl_map[c] = mp[c];
	e->ivl_faults = faults;
	e->arg = phase;
	if (o) {
		e->record = o->record;
		e->addr = o->value;
		e->ino = o->nonzero;
		e->dev = o->pos;
	}
	event_rss(e, t, tgid);
	event_submit(e, false);
}

/*
 * One program for every marker uprobe: the attach cookie holds the marker's phase and the
 * index of its argument rule in cfg.rules (0: none), which may pick another phase.
 */
SEC("uprobe")
int handle_marker(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 rule = MP_COOKIE_RULE(cookie);
	struct rule_out o = { .phase = MP_COOKIE_PHASE(cookie) };
	struct thread_state *ts;
	struct mp_phase_stats *s;
	struct mp_target *t;
	__u32 tgid;

	t = target_of_current(&tgid);
	if (!t)
		return 0;
	if (cookie & MP_COOKIE_REQ) {
		/* --request: a new request begins; the phase stays */
		o.record = MP_REC_REQUEST;
		phase_enter(t, tgid, t->phase, &o);
		return 0;
	}
	/*
	 * A sticky phase (e.g. warmup) its own marker entered ignores the markers of other
	 * phases. Entered otherwise (a guard's pick of another marker) it is not sticky.
	 */
	if ((t->flags & MP_T_STICKY) && o.phase != t->phase) {
		o.phase = t->phase;
	} else {
		if (rule && rule < cfg.nrules)
			rule_phase(ctx, rule, t->seen, &o);
		o.phase &= MP_MAX_PHASES - 1;
		if ((cfg.sticky_mask & (1U << o.phase)) && o.phase == MP_COOKIE_PHASE(cookie))
			__sync_fetch_and_or(&t->flags, MP_T_STICKY);
		else if (t->flags & MP_T_STICKY)
			__sync_fetch_and_and(&t->flags, ~MP_T_STICKY);
	}
	o.phase &= MP_MAX_PHASES - 1;
	call_flush(t, tgid);
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (ts) {
		mapping_flush(ts);
		maplog_send(ts);
	}
	s = stats_get(o.phase);
	if (s)
		s->calls++;
	phase_enter(t, tgid, o.phase, &o);
	return 0;
}

/*
 * A marker's return probe: its call is over; the cookie's phase (e.g. "host": the program
 * between engine calls) is current until the next marker. The call's growth ends here.
 */
SEC("uretprobe")
int handle_marker_ret(struct pt_regs *ctx)
{
	__u32 phase = MP_COOKIE_PHASE(bpf_get_attach_cookie(ctx)), tgid;
	struct thread_state *ts;
	struct mp_target *t;

	t = target_of_current(&tgid);
	if (!t || t->phase == phase)
		return 0;
	if (t->flags & MP_T_STICKY)
		return 0;
	call_flush(t, tgid);
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (ts) {
		mapping_flush(ts);
		maplog_send(ts);
	}
	phase_enter(t, tgid, phase, NULL);
	return 0;
}

/* ---- allocation probes (pinned and managed memory: see struct mp_alloc_rule) ---- */

static __always_inline void allocs_full(void)
{
	struct mp_drops *d = drops_get();

	if (d)
		d->allocs_full++;
}

static __always_inline void alloc_event(__u32 type, __u32 tgid, __u32 phase, __u64 ptr,
					const struct mp_alloc_val *v)
{
	struct mp_alloc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct mp_drops *d;

	if (!e) {
		d = drops_get();
		if (d)
			d->ringbuf++;
		return;
	}
	e->type = type;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->phase = phase;
	e->ts_ns = bpf_ktime_get_ns();
	e->ptr = ptr;
	e->size = v->size;
	e->cls = v->cls;
	e->alloc_phase = v->phase;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* One stack sample per allocation (rare calls: no rate cap), weighted by its size. */
static __always_inline void alloc_sample(void *ctx, __u32 tgid, __u32 phase, __u32 cls,
					 __u64 size)
{
	struct mp_drops *d;
	int err;

	if (cfg.stack_mode == MP_STACKS_NONE)
		return;
	err = stack_send(ctx, MP_EV_STACK, tgid, phase, cfg.stack_mode,
			 MP_STACK_CLS_ALLOC + cls, size, 0, 0, 0);
	if (err) {
		d = drops_get();
		if (d)
			d->stacks++;
	}
}

/* A free: forget the pointer if BPF saw it allocated, and say so. */
static __always_inline void alloc_free(__u32 tgid, struct mp_target *t, __u64 ptr)
{
	struct mp_alloc_key k = { .tgid = tgid, .ptr = ptr };
	struct mp_alloc_val *v, copy;

	v = bpf_map_lookup_elem(&allocs, &k);
	if (!v)
		return;		/* not ours: device memory, a nested call's second free */
	copy = *v;
	bpf_map_delete_elem(&allocs, &k);
	alloc_event(MP_EV_FREE, tgid, t->phase, ptr, &copy);
}

/*
 * Entry of an allocation probe: the cookie is the rule's index in cfg.allocs. Frees are
 * done here; allocations remember size and pointer (argument) until the call returns.
 */
SEC("uprobe")
int handle_alloc_entry(struct pt_regs *ctx)
{
	__u32 idx = (__u32)bpf_get_attach_cookie(ctx), tid, tgid;
	const volatile struct mp_alloc_rule *r;
	struct alloc_call *c, nc = {};
	struct mp_target *t;

	if (idx >= MP_MAX_ALLOC_RULES || idx >= cfg.nallocs)
		return 0;
	t = target_of_current(&tgid);
	if (!t)
		return 0;
	/* bound again: the checked copy was spilled across the calls above */
	r = &cfg.allocs[idx & (MP_MAX_ALLOC_RULES - 1)];
	if (r->op == MP_AOP_FREE) {
		alloc_free(tgid, t, rule_arg(ctx, r->ptr_arg));
		return 0;
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (c) {
		c->depth++;	/* a call inside the outer one: the outer one counts */
		return 0;
	}
	nc.size = rule_arg(ctx, r->size_arg);
	nc.ptr = rule_arg(ctx, r->ptr_arg);
	nc.rule = idx;
	nc.depth = 1;
	if (bpf_map_update_elem(&alloc_calls, &tid, &nc, BPF_ANY))
		allocs_full();
	return 0;
}

/* Return of an allocation probe: on success, the pointer joins allocs and the model hears. */
SEC("uretprobe")
int handle_alloc_return(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), tgid;
	const volatile struct mp_alloc_rule *r;
	struct mp_alloc_key k = {};
	struct mp_alloc_val v = {};
	struct alloc_call *c, call;
	struct mp_target *t;
	struct mp_drops *d;
	__u64 ptr;

	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (!c)
		return 0;
	if (c->depth > 1) {
		c->depth--;
		return 0;
	}
	call = *c;
	bpf_map_delete_elem(&alloc_calls, &tid);
	if (call.rule >= MP_MAX_ALLOC_RULES)
		return 0;
	r = &cfg.allocs[call.rule & (MP_MAX_ALLOC_RULES - 1)];
	/* CUDA's status codes are 32-bit enums: 0 is success */
	if (r->ok_zero && (__u32)PT_REGS_RC(ctx) != 0)
		return 0;
	t = target_of_current(&tgid);
	if (!t)
		return 0;
	ptr = call.ptr;
	if (r->ptr_src == MP_PTR_OUT && bpf_probe_read_user(&ptr, sizeof(ptr), (void *)call.ptr)) {
		d = drops_get();
		if (d)
			d->alloc_unread++;
		return 0;
	}
	k.tgid = tgid;
	k.ptr = ptr;
	v.size = call.size;
	v.cls = r->cls < MP_NR_ALLOC_CLS ? r->cls : MP_ALLOC_PINNED;
	v.phase = t->phase;
	if (bpf_map_update_elem(&allocs, &k, &v, BPF_ANY))
		allocs_full();
	alloc_event(MP_EV_ALLOC, tgid, t->phase, ptr, &v);
	alloc_sample(ctx, tgid, t->phase, v.cls, v.size);
	return 0;
}
