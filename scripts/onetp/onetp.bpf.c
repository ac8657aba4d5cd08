// SPDX-License-Identifier: GPL-2.0
/*
 * The one-tracepoint design (issue 28, item 3): RSS growth counted from the fault tracepoint
 * alone, without rss_stat. The fault tracepoint fires at a fault's entry, before the fault
 * changes anything, so at each target fault the program reads the exact RSS counters of the
 * address space and charges what they moved since the last reading to the previous fault's
 * address, then notes the current one. Growth after the last fault is read at a sync point
 * (onetp_sync, run by the loader while the target is stopped).
 *
 *   onetp_fault         tp_btf/page_fault_user
 *   onetp_fault_kernel  tp_btf/page_fault_kernel (kernel-mode faults on user addresses:
 *                       read(2) into a fresh buffer, ...)
 *   onetp_fork          tp_btf/sched_process_fork: the target's children become targets (as
 *                       scripts/floor's floor_fork)
 *   onetp_sync          raw_tp, run by BPF_PROG_TEST_RUN: every CPU's pending change charged
 *   ref_fault, ref_fault_kernel, ref_rss   the reference (exactness mode only): rss_stat's
 *                       changes, each read as memphase reads it, charged to the thread's
 *                       latest fault address (memphase's way)
 *
 * Two ways to read (rodata mode):
 *   OT_MODE_CPU  this CPU's part of each counter (the 4 parts are contiguous: one 16-byte
 *                read), charged to the latest fault ON THIS CPU: a CPU's part moves only
 *                with what ran on that CPU, so a thread that migrated, or several threads,
 *                do not mix. A fold (a part reaching the batch, 32 pages, moved into the
 *                count, the part set to 0) moves the count: then every part is read and
 *                the fold is given to the CPU whose part went to 0 (to the one that makes
 *                the pending changes smallest when none did), so that each CPU's part plus
 *                its folds is what that CPU added in all.
 *   OT_MODE_SUM  the whole sum (count + every CPU's part) at every fault, its change since
 *                the latest reading by any thread charged to this thread's previous fault:
 *                exact for one thread, mixed with several.
 *
 * Charges go into a per-CPU batch (one bucket: address >> shift) that is added to the
 * "buckets" hash when the bucket changes, as memphase's batches per mapping.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#include "floor.h"
#include "onetp.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 nr_cpus = 1;	/* possible CPUs */
const volatile __u32 mode = OT_MODE_CPU;
const volatile __u32 shift = 21;	/* bucket = address >> shift */
const volatile __u32 by_vma = 0;	/* bucket = the VMA's start (bpf_find_vma, in the fault) */

__u64 pcpu_off[OT_MAX_CPUS];	/* each CPU's offset of per-CPU data */
__u32 pcpu_ready;		/* 1: learnt; 2: could not be */
__u64 pcpu_mapbuf[64];		/* a copy of pcpu_base's struct bpf_array */

/* only for the per-CPU offsets (memphase's pcpu_learn) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_base SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_TSLOTS);
	__type(key, __u32);
	__type(value, struct floor_target);
} tslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OT_MMS);
	__type(key, __u32);
	__type(value, struct ot_mm);
} mms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OT_MMS);
	__type(key, __u32);
	__type(value, struct ot_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OT_BUCKETS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ot_bkey);
	__type(value, struct ot_bval);
} buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ot_diag);
} diag SEC(".maps");

/* the thread's latest fault: the reference's, and the sum mode's */
struct ot_thread {
	__u64 raddr;
	__u64 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ot_thread);
} threads SEC(".maps");

/* scripts/floor's target_lookup() (memphase's) */
static __always_inline struct floor_target *target_lookup(__u32 tgid)
{
	__u32 i, slot = floor_tslot(tgid, 0);
	struct floor_target *t = bpf_map_lookup_elem(&tslots, &slot);

	if (!t || !tgid)
		return NULL;
	if (t->tgid == tgid)
		return t;
	if (!t->chained)
		return NULL;
	for (i = 1; i < FLOOR_T_PROBES; i++) {
		slot = floor_tslot(tgid, i);
		t = bpf_map_lookup_elem(&tslots, &slot);
		if (t && t->tgid == tgid)
			return t;
	}
	return NULL;
}

static __always_inline struct ot_diag *diag_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&diag, &zero);
}

static __always_inline __s64 sabs(__s64 v)
{
	return v < 0 ? -v : v;
}

/* memphase's pcpu_learn(): each CPU's per-CPU offset, from a percpu array's base */
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
	for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
		p = bpf_map_lookup_percpu_elem(&pcpu_base, &zero, i);
		if (!p)
			goto fail;
		if (bpf_probe_read_kernel(&pv, sizeof(pv), &p))
			goto fail;
		pcpu_off[i] = pv - base;
	}
	pcpu_ready = 1;
	return 0;
fail:
	pcpu_ready = 2;
	return -1;
}

/* Adds pages (class k) to the bucket's entry; 0 or -1 (the hash is full). */
static __always_inline int bucket_add(__u64 bucket, __u32 tgid, __u32 who, __u32 slot,
				      const __s64 *grow, const __s64 *shrink)
{
	struct ot_bkey key = { .bucket = bucket, .tgid = tgid, .who = who, .slot = slot };
	struct ot_bval zero = {}, *v;
	int k;

	v = bpf_map_lookup_elem(&buckets, &key);
	if (!v) {
		bpf_map_update_elem(&buckets, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&buckets, &key);
		if (!v)
			return -1;
	}
	for (k = 0; k < OT_NCLS; k++) {
		if (grow[k])
			__sync_fetch_and_add(&v->grow[k], grow[k]);
		if (shrink[k])
			__sync_fetch_and_add(&v->shrink[k], shrink[k]);
	}
	return 0;
}

/* Moves a CPU's batch into the buckets hash (a subprogram, verified once). */
__noinline int ot_flush(struct ot_cpu *pc, __u32 tgid, __u32 slot)
{
	struct ot_diag *d;
	bool any = false;
	int k;

	if (!pc)
		return 0;
	for (k = 0; k < OT_NCLS; k++)
		any |= pc->bgrow[k] || pc->bshrink[k];
	if (!any)
		return 0;
	if (bucket_add(pc->bkey, tgid, OT_WHO_ONETP, slot, pc->bgrow, pc->bshrink)) {
		d = diag_get();
		if (d)
			d->bad++;
		return -1;
	}
	for (k = 0; k < OT_NCLS; k++)
		pc->bgrow[k] = pc->bshrink[k] = 0;
	return 0;
}

struct vma_ctx {
	__u64 start;
	__u64 end;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;

	c->start = vma->vm_start;
	c->end = vma->vm_end;
	return 0;
}

/*
 * by_vma: the bucket of addr is its VMA's start, looked up here, in the fault tracepoint
 * (interrupts off: bpf_find_vma's unlock is deferred to an irq_work), when addr is outside
 * the VMA of this CPU's last lookup. lookup: current is the target (not at the sync).
 */
static __always_inline __u64 vma_bucket(struct ot_cpu *pc, __u64 addr, bool lookup)
{
	struct vma_ctx c = {};
	struct ot_diag *d;

	if (addr >= pc->vstart && addr < pc->vend)
		return (pc->vstart >> 12) + 1;
	d = diag_get();
	if (lookup && d) {
		d->vma_lookups++;
		if (!bpf_find_vma(bpf_get_current_task_btf(), addr, vma_cb, &c, 0) && c.end) {
			pc->vstart = c.start;
			pc->vend = c.end;
			return (c.start >> 12) + 1;
		}
		d->vma_busy++;
	}
	return (addr >> shift) + 1;
}

/* Charges pages of class k to the bucket of addr (0: no fault before the change). */
static __always_inline void charge(struct ot_cpu *pc, __u32 tgid, __u32 slot, __u64 addr, int k,
				   __s64 pages, bool lookup)
{
	__u64 b = !addr ? 0 : by_vma ? vma_bucket(pc, addr, lookup) : (addr >> shift) + 1;

	if (b != pc->bkey) {
		ot_flush(pc, tgid, slot);
		pc->bkey = b;
	}
	k &= OT_NCLS - 1;
	if (pages > 0)
		pc->bgrow[k] += pages;
	else
		pc->bshrink[k] += pages;
}

/*
 * A consistent snapshot of m's counters: the counts into c and each CPU's 4 parts into its
 * entry's snap (count read again while it moved, as percpu_counter_sum() does under the
 * lock). 0 or -1.
 */
static __always_inline int snapshot(struct ot_mm *m, __u32 slot, __s64 *c)
{
	struct percpu_counter rs[OT_NCLS];
	__u64 at = m->mm + bpf_core_field_offset(struct mm_struct, rss_stat);
	struct ot_cpu *e;
	bool same;
	int k, try;
	__u32 i;

	if (bpf_probe_read_kernel(rs, sizeof(rs), (void *)at))
		return -1;
	for (try = 0; try < 4; try++) {
		for (k = 0; k < OT_NCLS; k++)
			c[k] = rs[k].count;
		for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
			e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
			if (!e || bpf_probe_read_kernel(e->snap, sizeof(e->snap),
							(void *)(m->counters + pcpu_off[i])))
				return -1;
		}
		if (bpf_probe_read_kernel(rs, sizeof(rs), (void *)at))
			return -1;
		same = true;
		for (k = 0; k < OT_NCLS; k++)
			same &= c[k] == rs[k].count;
		if (same)
			return 0;
	}
	return 0;
}

/*
 * Attributes the folds since m's g[] to the CPUs that made them, and leaves a fresh
 * snapshot in every CPU's snap. 0, 1 (another CPU is at it: put off) or -1. A subprogram:
 * verified once.
 *
 * For each CPU, x = part + its folds - its last reading is what it added since, if it did
 * not fold. A fold leaves the folding CPU's part at 0 (x is minus the part it had), so the
 * count's move dc goes to the one CPU whose part went to 0, is split between several such
 * (each its -x, the rest evenly), or, when none did (more changes after its fold), goes to
 * the CPU for which it makes the pending change smallest.
 */
__noinline int ot_folds(__u32 slot)
{
	struct ot_mm *m = bpf_map_lookup_elem(&mms, &slot);
	struct ot_diag *d = diag_get();
	__s64 c[OT_NCLS], dc, x, sc, bestsc, rem, share;
	__u32 i, n, j, last, best;
	struct ot_cpu *e;
	bool cand;
	int k;

	if (!m || !d)
		return -1;
	if (__sync_val_compare_and_swap(&m->busy, 0, 1))
		return 1;
	if (snapshot(m, slot, c)) {
		d->bad++;
		__sync_fetch_and_and(&m->busy, 0);
		return -1;
	}
	for (k = 0; k < OT_NCLS; k++) {
		dc = c[k] - m->g[k];
		if (!dc)
			continue;
		n = 0;
		rem = dc;
		last = best = 0;
		bestsc = 1LL << 62;
		for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
			e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
			if (!e)
				break;
			x = e->snap[k] + e->fold[k] - e->lastv[k];
			if (!e->snap[k] && x) {
				n++;
				rem += x;
				last = i;
			}
			sc = sabs(x + dc) - sabs(x);
			if (sc < bestsc) {
				bestsc = sc;
				best = i;
			}
		}
		if (n <= 1) {
			i = n ? last : best;
			e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
			if (e)
				e->fold[k] += dc;
			if (n)
				d->fold_one++;
			else
				d->fold_guess++;
		} else {
			/* rem / n, signed (BPF has no signed division) */
			share = rem < 0 ? -(__s64)((__u64)-rem / n) : (__s64)((__u64)rem / n);
			j = 0;
			for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
				e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
				if (!e)
					break;
				x = e->snap[k] + e->fold[k] - e->lastv[k];
				cand = !e->snap[k] && x;
				if (!cand)
					continue;
				j++;
				e->fold[k] += -x + (j == n ? rem - (n - 1) * share : share);
			}
			d->fold_multi++;
		}
		m->g[k] = c[k];
	}
	__sync_fetch_and_and(&m->busy, 0);
	return 0;
}

/*
 * First sight of an address space (mm: the kernel's, id its ctx_id): its sizes now are the
 * baseline, and every CPU's part its first reading. 0: ready; 1: another CPU is at it or it
 * cannot be read. A subprogram.
 */
__noinline int ot_init(__u32 slot, __u64 mm, __u64 id, __u32 tgid)
{
	struct ot_mm *m = bpf_map_lookup_elem(&mms, &slot);
	struct percpu_counter rs[OT_NCLS];
	struct ot_diag *d = diag_get();
	__s64 c[OT_NCLS], s[OT_NCLS];
	struct ot_cpu *e;
	__u64 at;
	__u32 i;
	int k;

	if (!m || !d)
		return 1;
	if (pcpu_ready != 1 && (pcpu_ready || pcpu_learn()))
		return 1;
	if (__sync_val_compare_and_swap(&m->busy, 0, 1))
		return 1;
	if (m->id == id) {
		/* done while we waited, or unreadable */
		__sync_fetch_and_and(&m->busy, 0);
		return m->ready == 1 ? 0 : 1;
	}
	m->ready = 0;
	m->id = id;
	m->mm = mm;
	m->tgid = tgid;
	m->last_addr = 0;
	at = mm + bpf_core_field_offset(struct mm_struct, rss_stat);
	if (bpf_probe_read_kernel(rs, sizeof(rs), (void *)at))
		goto bad;
	m->counters = (__u64)rs[0].counters;
	/* the 4 counters' parts are one per-CPU allocation (percpu_counter_init_many) */
	for (k = 1; k < OT_NCLS; k++)
		if ((__u64)rs[k].counters != m->counters + k * sizeof(__s32))
			goto bad;
	if (snapshot(m, slot, c))
		goto bad;
	for (k = 0; k < OT_NCLS; k++)
		s[k] = c[k];
	for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
		e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
		if (!e)
			goto bad;
		e->id = id;
		e->addr = 0;
		e->bkey = 0;
		e->vstart = e->vend = 0;
		e->rseen = 0;
		for (k = 0; k < OT_NCLS; k++) {
			s[k] += e->snap[k];
			e->lastv[k] = e->snap[k];
			e->fold[k] = 0;
			e->bgrow[k] = e->bshrink[k] = 0;
		}
	}
	for (k = 0; k < OT_NCLS; k++) {
		m->base[k] = m->last[k] = m->held[k] = s[k];
		m->g[k] = c[k];
	}
	d->inits++;
	m->ready = 1;
	__sync_fetch_and_and(&m->busy, 0);
	return 0;
bad:
	d->bad++;
	m->ready = 2;
	__sync_fetch_and_and(&m->busy, 0);
	return 1;
}

/* The target's entry for current's mm (read first if new), or NULL; *slotp its slot. */
static __always_inline struct ot_mm *mm_get(struct mm_struct *mm, __u32 tgid, __u32 *slotp)
{
	__u64 id = mm->context.ctx_id;
	__u32 slot = id & (OT_MMS - 1);
	struct ot_mm *m = bpf_map_lookup_elem(&mms, &slot);

	__u64 mmv = 0;

	if (!m)
		return NULL;
	if (m->id != id || m->ready != 1) {
		/* the pointer's value (a pointer passed as a scalar would be refused) */
		if (bpf_probe_read_kernel(&mmv, sizeof(mmv), &mm) || ot_init(slot, mmv, id, tgid))
			return NULL;
	}
	*slotp = slot;
	return m;
}

/* The sum of the 4 counters now (pages), into s; 0 or -1. Sum mode, reference. */
static __always_inline int sum_now(struct ot_mm *m, struct mm_struct *mm, __s64 *s)
{
	__s64 c1[OT_NCLS];
	__s32 p[OT_NCLS];
	bool same;
	int k, try;
	__u32 i;

	for (try = 0; try < 4; try++) {
		c1[0] = s[0] = mm->rss_stat[0].count;
		c1[1] = s[1] = mm->rss_stat[1].count;
		c1[2] = s[2] = mm->rss_stat[2].count;
		c1[3] = s[3] = mm->rss_stat[3].count;
		for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
			if (bpf_probe_read_kernel(p, sizeof(p),
						  (void *)(m->counters + pcpu_off[i])))
				return -1;
			for (k = 0; k < OT_NCLS; k++)
				s[k] += p[k];
		}
		same = c1[0] == mm->rss_stat[0].count && c1[1] == mm->rss_stat[1].count &&
		       c1[2] == mm->rss_stat[2].count && c1[3] == mm->rss_stat[3].count;
		if (same)
			break;
	}
	return 0;
}

static long busy_cb(__u64 i, void *data)
{
	struct ot_mm *m = *(struct ot_mm **)data;

	return !m || !READ_ONCE(m->busy);
}

/* Waits (bounded) while another CPU attributes folds: 0 when it is done. */
static __always_inline int ot_wait(struct ot_mm *m)
{
	struct ot_diag *d = diag_get();

	bpf_loop(4096, busy_cb, &m, 0);
	if (!READ_ONCE(m->busy))
		return 0;
	if (d)
		d->deferred++;
	return 1;
}

/* After the wait: attributes the folds still not attributed; 0, or not 0: put off. */
static __always_inline int ot_folds_again(struct ot_mm *m, struct mm_struct *mm, __u32 slot)
{
	if (mm->rss_stat[0].count == m->g[0] && mm->rss_stat[1].count == m->g[1] &&
	    mm->rss_stat[2].count == m->g[2] && mm->rss_stat[3].count == m->g[3])
		return 0;
	return ot_folds(slot);
}

/* A target's fault at addr (user or kernel mode): the reading, the charge, the note. */
static __always_inline int onetp_fault_at(__u64 addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, slot = 0, cpu;
	struct mm_struct *mm = task->mm;
	struct ot_thread *ts;
	struct ot_diag *d;
	struct ot_cpu *pc;
	struct ot_mm *m;
	__s64 s[OT_NCLS], v, dv;
	__s32 p[OT_NCLS];
	bool moved;
	int k;

	if (!target_lookup(tgid) || !mm)
		return 0;
	d = diag_get();
	if (!d)
		return 0;
	d->faults++;
	m = mm_get(mm, tgid, &slot);
	if (!m)
		return 0;
	pc = bpf_map_lookup_elem(&cpus, &slot);
	if (!pc || pc->id != m->id)
		return 0;
	if (mode == OT_MODE_SUM) {
		ts = bpf_task_storage_get(&threads, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts || sum_now(m, mm, s)) {
			d->bad++;
			return 0;
		}
		for (k = 0; k < OT_NCLS; k++) {
			dv = s[k] - __sync_lock_test_and_set(&m->last[k], s[k]);
			if (dv)
				charge(pc, tgid, slot, ts->addr, k, dv, true);
		}
		ts->addr = addr;
		m->last_addr = addr;
		d->fast++;
		return 0;
	}
	moved = mm->rss_stat[0].count != m->g[0] || mm->rss_stat[1].count != m->g[1] ||
		mm->rss_stat[2].count != m->g[2] || mm->rss_stat[3].count != m->g[3];
	cpu = bpf_get_smp_processor_id();
	if (moved) {
		/*
		 * Another CPU attributing folds: wait for it (it runs with interrupts off, a
		 * microsecond), then read again. Put off if it takes too long: this fault's
		 * change then joins the previous one's.
		 */
		if (ot_folds(slot) && (ot_wait(m) || ot_folds_again(m, mm, slot)))
			return 0;
		d->slow++;
	} else {
		d->fast++;
	}
	if (bpf_probe_read_kernel(p, sizeof(p),
				  (void *)(m->counters + pcpu_off[cpu & (OT_MAX_CPUS - 1)]))) {
		d->bad++;
		return 0;
	}
	for (k = 0; k < OT_NCLS; k++) {
		v = p[k] + pc->fold[k];
		dv = v - pc->lastv[k];
		if (dv) {
			pc->lastv[k] = v;
			charge(pc, tgid, slot, pc->addr, k, dv, true);
		}
	}
	pc->addr = addr;
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(onetp_fault, unsigned long addr, struct pt_regs *regs, unsigned long error_code)
{
	return onetp_fault_at(addr);
}

/* as memphase's handle_fault_kernel: not a fault taken with page faults disabled (those
 * change nothing) */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(onetp_fault_kernel, unsigned long addr, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (addr >= 0x800000000000ULL || bpf_get_current_task_btf()->pagefault_disabled)
		return 0;
	return onetp_fault_at(addr);
}

/* scripts/floor's floor_fork (memphase's target_add()) */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(onetp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, i, slot;
	struct floor_target *home, *t;

	if (ptgid == ctgid || !target_lookup(ptgid))
		return 0;
	for (i = 0; i < FLOOR_T_PROBES; i++) {
		slot = floor_tslot(ctgid, i);
		t = bpf_map_lookup_elem(&tslots, &slot);
		if (!t)
			return 0;
		if (!t->tgid || t->tgid == ctgid)
			break;
	}
	if (i == FLOOR_T_PROBES)
		return 0;
	t->tgid = ctgid;
	slot = floor_tslot(ctgid, 0);
	home = bpf_map_lookup_elem(&tslots, &slot);
	if (i && home)
		home->chained = 1;
	return 0;
}

/*
 * One address space at the sync point: each CPU's change since its last reading (the folds
 * attributed first) charged to that CPU's latest fault, every batch flushed. A subprogram.
 */
__noinline int ot_sync_mm(__u32 slot, __u32 tgid)
{
	struct ot_mm *m = bpf_map_lookup_elem(&mms, &slot);
	struct ot_diag *d = diag_get();
	__s64 c[OT_NCLS], s[OT_NCLS], v, dv;
	struct ot_cpu *e;
	__u32 i;
	int k;

	if (!m || !d || m->tgid != tgid || m->ready != 1)
		return 0;
	if (mode == OT_MODE_SUM) {
		if (snapshot(m, slot, c))
			return 0;
		for (k = 0; k < OT_NCLS; k++)
			s[k] = c[k];
		for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
			e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
			if (!e)
				return 0;
			for (k = 0; k < OT_NCLS; k++)
				s[k] += e->snap[k];
		}
		e = bpf_map_lookup_elem(&cpus, &slot);
		if (!e)
			return 0;
		for (k = 0; k < OT_NCLS; k++) {
			dv = s[k] - __sync_lock_test_and_set(&m->last[k], s[k]);
			if (dv) {
				charge(e, tgid, slot, m->last_addr, k, dv, false);
				d->sync_pages += sabs(dv);
			}
		}
	} else if (ot_folds(slot)) {
		return 0;
	}
	for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
		e = bpf_map_lookup_percpu_elem(&cpus, &slot, i);
		if (!e)
			return 0;
		for (k = 0; mode == OT_MODE_CPU && k < OT_NCLS; k++) {
			v = e->snap[k] + e->fold[k];
			dv = v - e->lastv[k];
			if (dv) {
				e->lastv[k] = v;
				charge(e, tgid, slot, e->addr, k, dv, false);
				d->sync_pages += sabs(dv);
			}
		}
		ot_flush(e, tgid, slot);
	}
	return 0;
}

/*
 * The sync point, run by BPF_PROG_TEST_RUN: ctx args[0] is a stopped target's tgid, args[1]
 * the slot of its live address space (not the one it had before its exec: freed).
 */
SEC("raw_tp")
int onetp_sync(struct bpf_raw_tracepoint_args *ctx)
{
	return ot_sync_mm(ctx->args[1] & (OT_MMS - 1), ctx->args[0]);
}

/* --- the reference: rss_stat, memphase's way ------------------------------------------- */

static __always_inline void ref_note(__u64 addr)
{
	struct ot_thread *ts;

	if (!target_lookup(bpf_get_current_pid_tgid() >> 32))
		return;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->raddr = addr;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(ref_fault, unsigned long addr, struct pt_regs *regs, unsigned long error_code)
{
	ref_note(addr);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(ref_fault_kernel, unsigned long addr, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (addr < 0x800000000000ULL && !bpf_get_current_task_btf()->pagefault_disabled)
		ref_note(addr);
	return 0;
}

/*
 * Each change of the target's own address space, as memphase's rss_amount_of() reads it:
 * what this CPU's part moved since its last event while the count did not move, else the
 * counter summed less what was charged; charged to the thread's latest fault address.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(ref_rss, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, slot = 0, cpu, bit;
	__s64 grow[OT_NCLS] = {}, shrink[OT_NCLS] = {}, count, sum, dv;
	__s32 own = 0, l;
	struct ot_thread *ts;
	struct ot_diag *d;
	struct ot_cpu *pc;
	struct ot_mm *m;
	__u64 addr;
	__u32 i, k;
	int try;

	if (member < 0 || member >= OT_NCLS || task->mm != mm || !target_lookup(tgid))
		return 0;
	d = diag_get();
	if (!d)
		return 0;
	d->ref_events++;
	m = mm_get(mm, tgid, &slot);
	if (!m)
		return 0;
	pc = bpf_map_lookup_elem(&cpus, &slot);
	if (!pc || pc->id != m->id)
		return 0;
	k = member & (OT_NCLS - 1);
	bit = 1U << k;
	cpu = bpf_get_smp_processor_id() & (OT_MAX_CPUS - 1);
	switch (k) {
	case 0: count = mm->rss_stat[0].count; break;
	case 1: count = mm->rss_stat[1].count; break;
	case 2: count = mm->rss_stat[2].count; break;
	default: count = mm->rss_stat[3].count; break;
	}
	if ((pc->rseen & bit) && count == pc->rcnt[k]) {
		if (bpf_probe_read_kernel(&own, sizeof(own),
					  (void *)(m->counters + k * 4 + pcpu_off[cpu])))
			return 0;
		if (own) {
			dv = own - pc->rlocal[k];
			pc->rlocal[k] = own;
			goto charge;
		}
	}
	for (try = 0; try < 4; try++) {
		sum = count;
		for (i = 0; i < OT_MAX_CPUS && i < nr_cpus; i++) {
			if (bpf_probe_read_kernel(&l, sizeof(l),
						  (void *)(m->counters + k * 4 + pcpu_off[i])))
				return 0;
			if (i == cpu)
				own = l;
			sum += l;
		}
		switch (k) {
		case 0: dv = mm->rss_stat[0].count; break;
		case 1: dv = mm->rss_stat[1].count; break;
		case 2: dv = mm->rss_stat[2].count; break;
		default: dv = mm->rss_stat[3].count; break;
		}
		if (dv == count)
			break;
		count = dv;
	}
	d->ref_sums++;
	dv = sum - m->held[k];
	pc->rlocal[k] = own;
	pc->rcnt[k] = count;
	pc->rseen |= bit;
charge:
	if (!dv)
		return 0;
	__sync_fetch_and_add(&m->held[k], dv);
	ts = bpf_task_storage_get(&threads, task, NULL, 0);
	addr = ts ? ts->raddr : 0;
	if (dv > 0)
		grow[k] = dv;
	else
		shrink[k] = dv;
	if (bucket_add(addr ? (addr >> shift) + 1 : 0, tgid, OT_WHO_REF, slot, grow, shrink))
		d->bad++;
	return 0;
}
