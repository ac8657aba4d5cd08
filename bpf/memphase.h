/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by the BPF programs and user space.
 * No #includes: fixed-width __u32/__u64/__s64 only, no pointers, long or bool.
 * Every ring buffer record starts with a __u32 type; structs are 8-byte aligned
 * with explicit padding. Types only, but for mp_rule__hit: the comparison of a marker's
 * argument rule, shared so that the unit tests run what BPF runs.
 */
#ifndef __MEMPHASE_H
#define __MEMPHASE_H

#define MP_MAX_PHASES	32	/* phase ids 0..31; 0 is "startup" */
#define MP_MAX_SLOTS	40	/* log2 buckets: [0], [1], [2,3], ... [2^38, 2^39) and up */
#define MP_COMM_LEN	16
#define MP_MAX_TARGETS	1024	/* targets with orphaned mappings at once */
#define MP_TSLOTS	4096	/* target slots (a power of two) */
#define MP_T_PROBES	4	/* a target lives in one of MP_T_PROBES slots of its tgid ... */
#define MP_T_STRIDE	1025	/* ... tgid + i * MP_T_STRIDE: a run of pids does not pile up */
#define MP_MAX_CPUS	256	/* per-CPU counters summed by the BPF side */
#define MP_MAX_MMS	4096	/* mms slots (a power of two) */
#define MP_MM_PROBES	4	/* an mm lives in one of the MP_MM_PROBES slots after its hash */

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

#define MP_COOKIE_RET	(1ULL << 16)	/* a return probe: enter the cookie's phase on return */
#define MP_COOKIE_REQ	(1ULL << 17)	/* a request marker (--request): no phase, an event */
#define MP_MAX_RULES	16	/* argument rules of the markers; index 0 is "no rule" */

/*
 * Marker cookie (bpf_get_attach_cookie): bits 0..7 the marker's phase id, bits 8..15 the
 * index of its rule in cfg.rules (0: no rule, the call enters the marker's phase).
 */
#define MP_COOKIE(phase, rule)	(((__u64)(rule) << 8) | (__u64)(phase))
#define MP_COOKIE_PHASE(c)	((__u32)(c) & 0xff)
#define MP_COOKIE_RULE(c)	((__u32)((c) >> 8) & 0xff)

/* Array counts (MP_RULE_ARRAY): at most this many bytes are read and counted. */
#define MP_RULE_MAX_ARRAY	256

/* What a rule's value is, sent with every call of its marker (struct mp_event, MP_EV_PHASE). */
enum mp_record {
	MP_REC_NONE = 0,
	MP_REC_TOKENS = 1,	/* tokens of the call (a batch's n_tokens) */
	MP_REC_CTX = 2,		/* the context size the engine was created with */
	MP_REC_REQUEST = 3,	/* a request marker was called (no value) */
	MP_REC_BYTES = 4,	/* bytes the call copies or allocates (a state's size) */
};

/* Where a rule reads its value, at function entry. */
enum mp_rule_src {
	MP_SRC_ARG = 0,		/* integer argument `at` (1..6) */
	MP_SRC_STACK = 1,	/* user memory at sp + `at` (arguments passed on the stack) */
};

/* How the value compares with the rule's: true picks then_phase, false else_phase. */
enum mp_rule_op {
	MP_OP_EQ = 0,
	MP_OP_NE = 1,
	MP_OP_LT = 2,
	MP_OP_LE = 3,
	MP_OP_GT = 4,
	MP_OP_GE = 5,
	MP_OP_BITS = 6,		/* (value & rule value) != 0 */
	MP_NR_OPS = 7,
};

/* One argument rule: which phase a marker call enters, from a value it was passed. */
struct mp_rule {
	__u32 src;		/* enum mp_rule_src */
	__u32 at;		/* MP_SRC_ARG: argument 1..6; MP_SRC_STACK: byte offset from sp */
	__u32 width;		/* 4 or 8 bytes (4: the low half of a register) */
	__u32 is_signed;	/* compare as signed (a 4-byte value is sign-extended) */
	__u32 op;		/* enum mp_rule_op */
	__u32 then_phase;	/* phase id when the comparison holds */
	__u32 else_phase;	/* phase id otherwise */
	__u32 pad;
	__u64 value;		/* compared with; a signed value in two's complement */
	/*
	 * Optional array count: arr_at != 0 reads a pointer at sp + arr_at; when it is not NULL
	 * and the value read above is > 0, the first (value - arr_trim) bytes it points to
	 * (all value of them when that leaves none; at most MP_RULE_MAX_ARRAY) are counted: all
	 * non-zero enters all_phase, none none_phase, some mixed_phase, and the comparison
	 * above is not used.
	 */
	__u32 arr_at;
	__u32 arr_trim;
	__u32 all_phase;
	__u32 none_phase;
	__u32 mixed_phase;
	/*
	 * Optional guard: guard_mask != 0 and the target has entered none of the phases of
	 * guard_mask (bit per phase id) yet (and the value is at most guard_max, if set): the
	 * call enters guard_phase, whatever the above.
	 */
	__u32 guard_mask;
	__u32 guard_phase;
	__u32 record;		/* enum mp_record: the value is sent with the call's event */
	__u32 rec_arg;		/* 1..6: the value sent is this integer argument instead */
	/* the guard holds only for a value of at most this (compared as the rule compares);
	 * 0: for any value */
	__u64 guard_max;
	/*
	 * Optional position of the call's last token (a decode's batch): pos_at != 0 reads
	 * the int32 array pointer at sp + pos_at and, with a value n > 0, its entry n - 1 (the
	 * last token's position); seq_at != 0 the int32 * array at sp + seq_at, its entry n - 1,
	 * and the first id it points to (the last token's sequence: its slot). Sent with the
	 * event (mp_event.dev: seq << 32 | position + 1; 0: not read).
	 */
	__u32 pos_at;
	__u32 seq_at;
};

/*
 * The rule's comparison, the one piece of logic in this header: BPF runs it on the value it
 * read, and the unit tests run the same code. v is the value as read (a 4-byte value in the
 * low half); returns 1 when the rule's then_phase applies.
 */
static inline int mp_rule__hit(__u32 op, __u32 width, __u32 is_signed, __u64 v, __u64 want)
{
	__s64 sv, swant = (__s64)want;

	if (width != 8)
		v = is_signed ? (__u64)(__s64)(__s32)v : (__u64)(__u32)v;
	sv = (__s64)v;
	switch (op) {
	case MP_OP_EQ:
		return v == want;
	case MP_OP_NE:
		return v != want;
	case MP_OP_LT:
		return is_signed ? sv < swant : v < want;
	case MP_OP_LE:
		return is_signed ? sv <= swant : v <= want;
	case MP_OP_GT:
		return is_signed ? sv > swant : v > want;
	case MP_OP_GE:
		return is_signed ? sv >= swant : v >= want;
	case MP_OP_BITS:
		return (v & want) != 0;
	}
	return 0;
}

/*
 * Allocation probes: functions that hand out or take back memory of a class RSS does not
 * tell apart (CUDA's pinned host memory, managed memory). The symbols and their argument
 * layout are user-space data; BPF reads a rule by the uprobe's cookie (its index in
 * cfg.allocs) and knows only "size at argument N, pointer at argument M or written through
 * the pointer argument M, success when it returns 0".
 */
#define MP_MAX_ALLOC_RULES	32

enum mp_alloc_cls {
	MP_ALLOC_PINNED = 0,	/* page-locked host memory (cudaHostAlloc, cuMemHostRegister) */
	MP_ALLOC_MANAGED = 1,	/* unified memory (cudaMallocManaged, cuMemAllocManaged) */
	MP_NR_ALLOC_CLS = 2,
};

enum mp_alloc_op {
	MP_AOP_ALLOC = 0,	/* entry and return probes: size and pointer, counted on success */
	MP_AOP_FREE = 1,	/* entry probe: the pointer argument, if BPF saw it allocated */
};

enum mp_ptr_src {
	MP_PTR_ARG = 0,		/* the pointer is argument ptr_arg */
	MP_PTR_OUT = 1,		/* argument ptr_arg points to where the call stores it (void **) */
};

struct mp_alloc_rule {
	__u32 op;		/* enum mp_alloc_op */
	__u32 cls;		/* enum mp_alloc_cls of what it allocates */
	__u32 size_arg;		/* MP_AOP_ALLOC: argument 1..6 holding the size in bytes */
	__u32 ptr_arg;		/* argument 1..6 holding the pointer (or where it is stored) */
	__u32 ptr_src;		/* enum mp_ptr_src */
	__u32 ok_zero;		/* the call succeeded when it returned 0 (else: always) */
};

/* allocs: (process, pointer) -> an allocation BPF saw succeed, until its free. */
struct mp_alloc_key {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};

struct mp_alloc_val {
	__u64 size;
	__u32 cls;		/* enum mp_alloc_cls */
	__u32 phase;		/* the phase it was allocated in */
};

/*
 * Stack samples of an allocation probe carry cls = MP_STACK_CLS_ALLOC + its mp_alloc_cls
 * and the allocation's size as weight; they are not RSS growth.
 */
#define MP_STACK_CLS_ALLOC	16

/* MP_EV_ALLOC and MP_EV_FREE: one allocation probe hit. */
struct mp_alloc_event {
	__u32 type;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 phase;		/* the process's phase at the call */
	__u64 ts_ns;
	__u64 ptr;
	__u64 size;		/* bytes (FREE: as allocated) */
	__u32 cls;		/* enum mp_alloc_cls */
	__u32 alloc_phase;	/* FREE: the phase it was allocated in */
};

/* Configuration the BPF side reads (rodata). */
struct mp_config {
	__u32 stack_mode;	/* enum mp_stack_mode */
	__u32 nrules;		/* rules in use, rules[0] included (0: none) */
	__u64 sample_bytes;	/* one stack sample per this much RSS growth of a thread */
	__u64 sample_interval_ns; /* global cap: 1e9 / max samples per second (0: none) */
	__u32 map_tracking;	/* classify faults by mapping */
	__u32 sticky_mask;	/* bit per phase: entered by a marker of that phase, left only
				 * by one (a rule's other pick, e.g. a guard's, is not sticky) */
	__u64 max_rss_bytes;	/* guard: stop a process whose RSS crosses this (0: off) */
	/* origins: the stack of every mmap/mremap of this size or more (0: no origins) */
	__u64 origin_min_bytes;
	__u32 origin_small_per_sec;	/* and of this many smaller ones a second */
	__u32 origin_small_max;		/* and of this many smaller ones in all */
	struct mp_rule rules[MP_MAX_RULES]; /* the markers' rules; [0] unused */
	__u32 nallocs;		/* allocation rules in use */
	__u32 pad2;
	struct mp_alloc_rule allocs[MP_MAX_ALLOC_RULES];
};

/*
 * The invoking user (the BPF side's global `observer`, set by user space before any target
 * is added), when not root: a target stops being followed once that user could no longer
 * ptrace it (MP_EV_LEFT): an exec that changes its ids or gives it capabilities, of a
 * program they cannot read, or its own PR_SET_DUMPABLE 0.
 */
struct mp_observer {
	__u32 check;		/* 0: root started memphase, nothing to check */
	__u32 uid;
	__u32 gid;
	__u32 pad;
};

/* Address-space counters of an interval, in the order of mp_phase_stats' mmap_bytes.. */
enum mp_ivl_map {
	MP_IVL_MMAP = 0,
	MP_IVL_MUNMAP = 1,
	MP_IVL_BRK = 2,
	MP_IVL_BRK_SHRINK = 3,
	MP_NR_IVL_MAP = 4,
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
	__u64 reclaim_ns;		/* target threads in direct (or memcg) reclaim */
	__u64 reclaim_count;
	__u64 reclaimed_pages;
	__u64 hist[MP_NR_HISTS][MP_MAX_SLOTS];
};

/* Target flags. */
#define MP_T_WAIT_EXEC	(1U << 0)	/* spawned, not exec'd yet: ignore its events */
#define MP_T_FRESH_MM	(1U << 1)	/* exec'd: its next mm starts from zero RSS */
#define MP_T_EXITED	(1U << 2)
#define MP_T_GUARD_HIT	(1U << 4)	/* crossed --max-rss: stopped, user space ends it */
#define MP_T_FORKED	(1U << 5)	/* forked from a target: its first image is inherited */
#define MP_T_HELD	(1U << 6)	/* stopped by the BPF side until user space continues it */
#define MP_T_ORPHANS	(1U << 7)	/* ended threads left growth to look up (BPF only) */
#define MP_T_HEAP_ORIGIN (1U << 8)	/* the heap's origin (its first brk growth) was sent */
#define MP_T_STICKY	(1U << 9)	/* in a sticky phase its own marker entered (BPF) */
#define MP_T_SEEDING	(1U << 10)	/* attached, sizes not yet read: ignore its events */
#define MP_T_LEFT	(1U << 11)	/* the invoking user could no longer ptrace it: not
					 * followed (set with MP_T_EXITED) */
#define MP_T_NEW_IMAGE	(1U << 12)	/* exec'd, no growth sample sent since (BPF only) */

/* MP_EV_LEFT: why the invoking user could no longer ptrace the process (bits of arg). */
#define MP_LEFT_UIDS	(1U << 0)	/* an exec gave it other user ids (setuid) */
#define MP_LEFT_GIDS	(1U << 1)	/* ... other group ids (setgid) */
#define MP_LEFT_CAPS	(1U << 2)	/* ... capabilities (file capabilities) */
#define MP_LEFT_SECURE	(1U << 3)	/* ... a secure exec (an LSM's transition) */
#define MP_LEFT_NODUMP	(1U << 4)	/* not dumpable after an exec (an unreadable program) */
#define MP_LEFT_PRCTL	(1U << 5)	/* it made itself not dumpable (PR_SET_DUMPABLE 0) */

/*
 * One observed process, in one of the MP_T_PROBES slots of tslots from mp_tslot(tgid, 0)
 * on (array lookups, no hashing): the first, its home, unless another process holds it;
 * `chained` on a home says a process of it may be in one of the others.
 */
struct mp_target {
	__u32 tgid;		/* 0: free slot */
	__u32 chained;		/* of the slot, not of its process: kept when the slot frees */
	__u32 slot;		/* where it is: its call_pc entry too */
	__u32 phase;
	__u32 flags;
	__u32 parent;		/* tgid of the target it was forked from, 0 for roots */
	__u32 mm_gen;		/* bumped at exec: address spaces of older images are dead */
	__u32 seen;		/* bit per phase id: phases entered so far (rule guards) */
	__u32 own_mm;		/* mm id of its own address space (its entry in mms: its RSS) */
	__u32 pad;
	/*
	 * The current phase interval: the fault path counts its faults, growth and shrink per
	 * CPU (the BPF side's call_pc, monotonic) and the phase event that ends it takes their
	 * sums less ivl_base, the sums at the previous event. The syscalls' address-space
	 * bytes are counted here (reset at the event).
	 */
	__u64 ivl_map[MP_NR_IVL_MAP];	/* mmap, munmap, brk, brk shrink bytes */
	__u64 ivl_base_faults;
	__u64 ivl_base_growth[MP_NR_CLASSES];
	__u64 ivl_base_shrink[MP_NR_CLASSES];
	__u64 last_brk;
	/* peaks of its address spaces whose entry in mms was taken over before it was read */
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;
};

/* The i-th slot of tgid's in tslots. */
static inline __u32 mp_tslot(__u32 tgid, __u32 i)
{
	return (tgid + i * MP_T_STRIDE) & (MP_TSLOTS - 1);
}

/*
 * mms: RSS of one address space, in an array of MP_MAX_MMS slots (open addressing: an
 * array lookup on the fault path instead of a hash). The entry of mm_id (the mm's x86
 * context id, never reused) is in one of the MP_MM_PROBES slots from mm_id % MP_MAX_MMS on; tgid 0: free.
 * The first 8 bytes (tgid, mm_id) are claimed at once by compare-and-swap.
 *
 * Its exact size per class is rss[] plus each CPU's share in mmpc (struct mp_mm_pc), so that
 * an rss_stat event writes only its own CPU's lines; its peaks are kept up to date at each
 * shrink (a size is at its peak just before it falls): a reader takes the larger of a peak
 * and the current size.
 */
#define MP_MM_READY	(1U << 31)	/* seeded: the entry is filled in */
struct mp_mm {
	__u32 tgid;
	__u32 mm_id;
	__u32 seeded;			/* bit per class: baseline known; MP_MM_READY */
	__u32 gen;			/* the owner's mm_gen when this mm was its own */
	__u32 seq;			/* this filling of the entry (unique): tags the CPUs' shares */
	__u32 pad;
	__s64 rss[MP_NR_CLASSES];	/* bytes: the size less the CPUs' shares in mmpc */
	__s64 peak_total;		/* max of file + anon + shmem, as of the last shrink */
	__s64 peak[MP_NR_CLASSES];	/* as of the last shrink of the class */
	__s64 floor[MP_NR_CLASSES];	/* inherited at fork: shrink below it was never growth */
	/* when peak_total was reached (the shrink that ended it) and the sizes then: the
	 * timeline's point for a peak between two readings */
	__u64 peak_ns;
	__s64 peak_rss[MP_NR_CLASSES];
};

/*
 * mmpc: one CPU's share of the size of an address space (a per-CPU array of MP_MMPC_SLOTS,
 * indexed by mm_id % MP_MMPC_SLOTS; another address space taking the slot moves the share
 * into its entry's rss[] first). The kernel's RSS counter is a per-CPU counter (count plus
 * each CPU's part; a part that reaches the batch is folded into count and left at 0). An
 * event whose CPU's part is not 0 changed the size by exactly what that part moved since
 * the CPU's last look, whatever other CPUs folded meanwhile. At a part of 0 (this CPU's
 * fold, maybe) the counter is summed, and the share takes the difference to the sizes held
 * (rss[] plus all the shares) less what each other CPU's part moved since its own last
 * look (its events take that themselves: base[] is its share without its part then).
 */
#define MP_MMPC_SLOTS	64
struct mp_mm_pc {
	__u32 mm_id;			/* the address space whose share this is (with seq) */
	__u32 seq;			/* its entry's seq; 0: unused */
	__u32 seen;			/* bit per class: local[] and base[] are a look */
	__u32 busy;			/* 1 while this CPU sums the counter and moves part[] */
	__s64 part[MP_NR_CLASSES];	/* bytes of the size that this CPU accounted */
	__s64 base[MP_NR_CLASSES];	/* part[] less local[] (bytes), as of the last sum */
	__s32 local[MP_NR_CLASSES];	/* this CPU's part of the counter at its last look */
};

/* Mapping kinds a fault is classified into (bpf_find_vma on its address). */
enum mp_map_kind {
	MP_MAP_UNKNOWN = 0,	/* no recent fault (e.g. get_user_pages) or no VMA */
	MP_MAP_HEAP = 1,	/* anon, the brk heap */
	MP_MAP_STACK = 2,	/* anon, the main thread's stack */
	MP_MAP_THREAD_STACK = 3, /* anon, the faulting thread's own stack */
	MP_MAP_ANON = 4,	/* other anon mapping (key: its start) */
	MP_MAP_FILE = 5,	/* regular file (key: dev, ino) */
	MP_MAP_SHMEM = 6,	/* tmpfs/shmem/memfd/SysV/shared anon */
	MP_MAP_DEVICE = 7,	/* character device, e.g. /dev/nvidia* (CUDA pinned memory) */
	MP_MAP_SPECIAL = 8,	/* the kernel's, without a file: [uprobes], [vdso] (key: start) */
	MP_NR_MAP_KINDS = 9,
};

/* mappings: growth per phase, class and mapping. */
struct mp_map_key {
	__u32 phase;
	__u32 cls;		/* enum mp_class of the growth */
	__u32 kind;		/* enum mp_map_kind */
	__u32 pad;
	__u64 dev;		/* kernel dev_t (major << 20 | minor) of file kinds */
	__u64 ino;
	__u64 start;		/* MP_MAP_ANON: vm_start */
};

struct mp_map_val {
	__u64 bytes;
	__u64 vm_start;		/* the VMA last seen for this key */
	__u64 vm_end;
	__u32 tgid;		/* a process that has it mapped (to find its path) */
	__u32 pad;
};

/*
 * A thread's growth per mapping, batched in the thread (a batch that reaches
 * MAP_FLUSH_BYTES or makes room for another mapping's becomes an entry) and sent to user
 * space MP_MAPLOG_LEN entries at a time, at a phase change or when the thread ends
 * (MP_EV_MAPLOG): a fault that hops to another mapping writes the next entry of a buffer
 * the thread reuses. When the ring buffer is full the entries go to the mappings hash.
 * User space adds the batches to the key's entry there: a mapping's growth is both.
 */
#define MP_MAPLOG_LEN	32

struct mp_map_rec {
	__u64 start;		/* the key's start (MP_MAP_ANON: its VMA's) */
	__u64 ino;
	__u64 vm_start;		/* the VMA (or the part of it) last seen for the key */
	__u64 bytes;		/* the growth */
	__u32 vm_pages;		/* the VMA's length in pages */
	__u32 dev;
	__u8 phase;
	__u8 cls;
	__u8 kind;
	__u8 pad[5];
};

struct mp_maplog_event {
	__u32 type;		/* MP_EV_MAPLOG */
	__u32 n;		/* entries in r[] */
	__u32 tgid;		/* the process they are of */
	__u32 pad;
	struct mp_map_rec r[MP_MAPLOG_LEN];
};

/* Drop and health counters, a PERCPU_ARRAY of one entry. */
struct mp_drops {
	__u64 ringbuf;		/* bpf_ringbuf_reserve failed (rare events) */
	__u64 stacks;		/* stack samples dropped (ring buffer full) */
	__u64 stacks_capped;	/* samples postponed by the rate cap (bytes carried over) */
	__u64 mappings_full;	/* mapping keys that did not fit (counted as unknown) */
	__u64 mapping_lost_bytes; /* growth whose mapping entry could not be stored at all */
	__u64 vma_busy;		/* growth events left [unknown]: address space locked too long,
				 * or a syscall's range over several mappings */
	__u64 targets_full;	/* a child could not join the target set */
	__u64 mms_full;		/* an address space could not be tracked */
	__u64 vma_deferred;	/* faults whose lookup waited for the address space's lock */
	__u64 origins;		/* mapping origins dropped (ring buffer full) */
	__u64 origins_capped;	/* smaller mappings left without an origin by the cap */
	__u64 origins_same;	/* the same range mapped again within a second: not resent */
	__u64 allocs_full;	/* allocation-probe records that did not fit (calls, pointers) */
	__u64 alloc_unread;	/* a returned pointer could not be read (counted, not tracked) */
	__u64 rss_unread;	/* RSS events whose per-CPU counter could not be summed */
	__u64 maplog_full;	/* mapping batches that found the ring buffer full (to the hash) */
};

enum mp_event_type {
	MP_EV_PHASE = 1,	/* a target changed phase */
	MP_EV_FORK = 2,		/* a target forked a process, which joined the set */
	MP_EV_EXEC = 3,
	MP_EV_EXIT = 4,		/* a target process ended (last thread) */
	MP_EV_OOM = 5,		/* oom:mark_victim of a target */
	MP_EV_EXEC_MAP = 6,	/* a target mapped an executable file not seen before */
	MP_EV_STACK = 7,	/* struct mp_stack_event */
	MP_EV_FILE_MAP = 8,	/* a target mapped a file (data) not seen before */
	MP_EV_GUARD = 9,	/* a target crossed --max-rss and was stopped (SIGSTOP) */
	MP_EV_ORIGIN = 10,	/* struct mp_stack_event: the stack that created a mapping */
	MP_EV_ALLOC = 11,	/* struct mp_alloc_event: an allocation probe's call succeeded */
	MP_EV_FREE = 12,	/* struct mp_alloc_event: a tracked allocation was freed */
	MP_EV_MAPLOG = 13,	/* struct mp_maplog_event: a thread's growth per mapping */
	MP_EV_LEFT = 14,	/* a target is no longer followed (arg: MP_LEFT_* bits) */
};

/* MP_EV_ORIGIN: the syscall that created the mapping (mp_stack_event.map_how). */
enum mp_origin_how {
	MP_ORIGIN_MMAP = 0,
	MP_ORIGIN_MREMAP = 1,	/* moved or grown: addr is the new start */
	MP_ORIGIN_BRK = 2,	/* the heap's first growth */
};
/*
 * What backs the mapping, in map_how's bits from MP_ORIGIN_BACKING_SHIFT on: an origin
 * names only mappings of its own backing (a thread stack mapped over a file mapping's freed
 * part is not the file's creator). 0: not known (mremap, a recording from before).
 */
#define MP_ORIGIN_HOW_MASK	0xff
#define MP_ORIGIN_BACKING_SHIFT	8
enum mp_origin_backing {
	MP_BACKING_UNKNOWN = 0,
	MP_BACKING_ANON = 1,	/* no file (MAP_ANONYMOUS, the heap) */
	MP_BACKING_FILE = 2,	/* a file's pages */
};

struct mp_event {
	__u32 type;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 arg;		/* PHASE: new phase; FORK: child tgid; EXIT: exit code; */
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 old_phase;	/* PHASE: previous phase; others: phase at the event */
	__u32 record;		/* PHASE: enum mp_record of `addr` */
	__u64 addr;		/* EXEC_MAP: start of the mapping; PHASE: the rule's value */
	__u64 ino;		/* EXEC_MAP: inode; PHASE: an array's non-zero bytes (all: value) */
	__u64 dev;		/* EXEC_MAP: device; PHASE: the last token's seq << 32 |
				 * position + 1 (0: not read) */
	__u64 rss[MP_NR_CLASSES]; /* OOM: victim's rss in bytes (swap unused); PHASE: the
				   * process's RSS per class at the change */
	char comm[MP_COMM_LEN];
	/* OOM: the victim's memory cgroup that was at its limit (0: none was) */
	__u64 cg_id;		/* kernfs id: the cgroup directory's inode number */
	__u64 cg_limit;		/* bytes */
	union {
		char cg_name[64];
		char path[64];	/* LEFT by an exec: the program, as execve named it */
	};
	/*
	 * PHASE with a change: what the process counted in the interval of old_phase that
	 * ends here (growth and shrink per class, faults), so that a later marker can show an
	 * interval as another phase (a preset's relabel: the --fit probe's load).
	 */
	__u64 ivl_growth[MP_NR_CLASSES];
	__u64 ivl_shrink[MP_NR_CLASSES];
	__u64 ivl_faults;
	__u64 ivl_map[MP_NR_IVL_MAP];	/* mmap, munmap, brk, brk shrink bytes */
};

/*
 * MP_EV_EXEC_MAP and MP_EV_FILE_MAP: the event and the file's path as the BPF side read it
 * from its dentries at the mmap's exit, for when the process has unmapped the file (or
 * exited) before user space reads /proc/PID/maps. The names go leaf first, each ending in
 * a NUL: "model.gguf\0models\0home\0" is /home/models/model.gguf.
 */
#define MP_FPATH_MAX		1024
#define MP_FPATH_NAME_MAX	256	/* one name with its NUL (NAME_MAX + 1) */

struct mp_fpath {
	__u32 len;		/* bytes of path used (0: not read) */
	__u32 whole;		/* 1: the names reach the root; 0: cut, or a file of no directory */
	__u32 nlink;		/* the inode's links (0: the file was deleted) */
	__u32 pad;
	char path[MP_FPATH_MAX];
};

struct mp_file_event {
	struct mp_event e;
	struct mp_fpath fp;
};

/* ---- sampled stacks ---- */

#define MP_STACK_MAX		(16 * 1024)	/* bytes of user stack copied (dwarf) */
#define MP_FP_MAX_FRAMES	127
#define MP_NR_REGS		21		/* struct pt_regs on x86-64, in its order */

enum mp_stack_mode {
	MP_STACKS_NONE = 0,
	MP_STACKS_DWARF = 1,
	MP_STACKS_FP = 2,
};

/* x86-64 struct pt_regs indices */
enum mp_reg {
	MP_R15, MP_R14, MP_R13, MP_R12, MP_RBP, MP_RBX, MP_R11, MP_R10, MP_R9, MP_R8,
	MP_RAX, MP_RCX, MP_RDX, MP_RSI, MP_RDI, MP_ORIG_RAX, MP_RIP, MP_CS, MP_EFLAGS,
	MP_RSP, MP_SS,
};

/*
 * MP_EV_STACK: one sample standing for `weight` bytes of RSS growth of one thread.
 * MP_EV_ORIGIN: the same record for the syscall that created a mapping: addr is its start,
 * weight its length, map_prot its protection and map_how an enum mp_origin_how.
 * fp mode: ips[nframes] follow the header; dwarf: regs + stack[stack_len] bytes from
 * regs[MP_RSP] upward.
 */
struct mp_stack_event {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 phase;
	__u64 ts_ns;
	__u64 weight;		/* bytes of growth this sample stands for */
	__u64 addr;		/* start of the mapping of the last fault, 0 if unknown */
	__u32 mode;		/* enum mp_stack_mode */
	__u32 cls;		/* memory class of the growth that triggered it */
	__u32 nframes;		/* fp: entries in ips */
	__u32 stack_len;	/* dwarf: bytes in stack */
	__s64 err;		/* fp: bpf_get_stack error (<0), else 0 */
	__u32 map_prot;		/* ORIGIN: PROT_* of the new mapping */
	__u32 map_how;		/* ORIGIN: enum mp_origin_how, and its backing's bits */
	__u32 cpu;		/* the CPU it was taken on */
	__u32 pad;
	char comm[MP_COMM_LEN];
	__u64 regs[MP_NR_REGS];
};

/*
 * memphase watch (bpf/watch.bpf.c): one record per exec whose new comm passes the filter,
 * so the supervisor finds processes that start after it.
 */
struct mp_exec_event {
	__u32 pid;		/* the process (tgid) that exec'd */
	__u32 ppid;		/* its parent's tgid */
	char comm[MP_COMM_LEN];	/* its comm after the exec */
};

#endif /* __MEMPHASE_H */
