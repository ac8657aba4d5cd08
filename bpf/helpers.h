/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inline helpers every unit uses: counters and drops, the histograms, the target of a
 * process (its slot or the hash), the ring buffer's events, a target's per-CPU counts of
 * its interval, and an address space's id.
 */
#ifndef __MP_HELPERS_H
#define __MP_HELPERS_H

#include "shared.h"

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

/* The process's state: its home slot or, when the home is chained, one of the others. */
static __always_inline struct mp_target *target_lookup(__u32 tgid)
{
	__u32 i, slot = mp_tslot(tgid, 0);
	struct mp_target *t = bpf_map_lookup_elem(&tslots, &slot);

	if (!t || !tgid)
		return NULL;
	if (t->tgid == tgid)
		return t;
	if (!t->chained)
		return NULL;
	for (i = 1; i < MP_T_PROBES; i++) {
		slot = mp_tslot(tgid, i);
		t = bpf_map_lookup_elem(&tslots, &slot);
		if (t && t->tgid == tgid)
			return t;
	}
	return NULL;
}

/* Adds a process to its home or, chaining the home, to the first free other slot (one it
 * holds already first). 0, or -1 when all are taken. */
static __always_inline int target_add(__u32 tgid, const struct mp_target *nt)
{
	__u32 i, slot, chained, want = MP_T_PROBES;
	struct mp_target *home, *t;

	slot = mp_tslot(tgid, 0);
	home = bpf_map_lookup_elem(&tslots, &slot);
	if (!home)
		return -1;
	if (home->tgid && home->tgid != tgid) {
		for (i = 1; i < MP_T_PROBES; i++) {
			slot = mp_tslot(tgid, i);
			t = bpf_map_lookup_elem(&tslots, &slot);
			if (!t)
				return -1;
			if (t->tgid == tgid) {
				want = i;
				break;
			}
			if (!t->tgid && want == MP_T_PROBES)
				want = i;
		}
		if (want == MP_T_PROBES)
			return -1;
		home->chained = 1;
		slot = mp_tslot(tgid, want);
	}
	t = bpf_map_lookup_elem(&tslots, &slot);
	if (!t)
		return -1;
	chained = t->chained;
	*t = *nt;
	t->tgid = tgid;
	t->slot = slot;
	t->chained = chained;
	return 0;
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

/* A record's flags: wake the reader on request or when a quarter of the ring is pending. */
static __always_inline __u64 ring_wake(bool urgent)
{
	if (urgent || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= ring_wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void event_submit(struct mp_event *e, bool urgent)
{
	bpf_ringbuf_submit(e, ring_wake(urgent));
}

/* size bytes of the ring (NULL when full: counted as a drop) */
static __always_inline void *event_reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);
	struct mp_drops *d;

	if (!e) {
		d = drops_get();
		if (d)
			d->ringbuf++;
	}
	return e;
}

/* The fields every event has, of the current task */
static __always_inline void event_init(struct mp_event *e, __u32 type, __u32 tgid, __u32 phase)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->old_phase = phase;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

static __always_inline struct mp_event *event_new(__u32 type, __u32 tgid, __u32 phase)
{
	struct mp_event *e = event_reserve(sizeof(*e));

	if (e)
		event_init(e, type, tgid, phase);
	return e;
}

/* This CPU's counts of target t (its slot's, reset when the slot had another process). */
static __always_inline struct call_pc *call_pc_get(const struct mp_target *t)
{
	__u32 slot = t->slot, c;
	struct call_pc *pc = bpf_map_lookup_elem(&call_pc, &slot);

	if (pc && pc->tgid != t->tgid) {
		pc->tgid = t->tgid;
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
static __always_inline void call_add(const struct mp_target *t, __u32 member, __u64 delta)
{
	struct call_pc *c = call_pc_get(t);

	if (!c)
		return;
	member &= MP_NR_CLASSES - 1;
	c->ivl_growth[member] += delta;
	if (member != MP_SWAP)
		c->growth += delta;
}

/* delta bytes of shrink of class member in the target's phase interval */
static __always_inline void ivl_shrink_add(const struct mp_target *t, __u32 member, __u64 delta)
{
	struct call_pc *c = call_pc_get(t);

	if (c)
		c->ivl_shrink[member & (MP_NR_CLASSES - 1)] += delta;
}

struct call_sum_ctx {
	__u32 slot;
	__u32 tgid;
	__u64 sum;
};

static __maybe_unused long call_sum_cb(__u64 cpu, void *data)
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

static __maybe_unused long ivl_sum_cb(__u64 cpu, void *data)
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
static __always_inline void ivl_take(struct mp_target *t, __u64 *f, __u64 *g, __u64 *sh,
				     __u64 *mp)
{
	struct ivl_sum_ctx x = { .slot = t->slot, .tgid = t->tgid };
	__u32 c;

	for (c = 0; c < MP_NR_IVL_MAP; c++)
		mp[c] = __sync_lock_test_and_set(&t->ivl_map[c], 0);
	bpf_loop(MP_MAX_CPUS, ivl_sum_cb, &x, 0);
	for (c = 0; c < MP_NR_CLASSES; c++) {
		g[c] = x.growth[c] - __sync_lock_test_and_set(&t->ivl_base_growth[c], x.growth[c]);
		sh[c] = x.shrink[c] - __sync_lock_test_and_set(&t->ivl_base_shrink[c], x.shrink[c]);
	}
	*f = x.faults - __sync_lock_test_and_set(&t->ivl_base_faults, x.faults);
}

/* The growth since the previous marker call ends one "call" of the phase it ran in. */
static __always_inline void call_flush(struct mp_target *t)
{
	struct mp_phase_stats *s = stats_get(t->phase);
	struct call_sum_ctx x = { .slot = t->slot, .tgid = t->tgid };

	bpf_loop(MP_MAX_CPUS, call_sum_cb, &x, 0);
	/* startup is not a marker call (and a process without markers has only that) */
	if (s && t->phase)
		hist_add(s, MP_HIST_CALL_GROWTH, x.sum);
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
 * One stack record in the scratch entry, sent: the header (every field, since the entry
 * keeps the previous record's), the comm, then the user stack in mode. 0, or -errno when
 * no scratch entry or the ring buffer had no room (the caller counts its own drop). Records
 * wait for the reader's next poll, except a new image's first growth sample: its unwinder
 * then reads the image's maps while the process lives (a short program is gone by then).
 */
static __always_inline int stack_send(void *ctx, __u32 type, __u32 tgid, __u32 phase,
				      __u32 mode, __u32 cls, __u64 weight, __u64 addr,
				      __u32 prot, __u32 how)
{
	struct mp_stack_event *h;
	struct mp_target *t;
	__u32 zero = 0;
	bool wake = false;

	h = bpf_map_lookup_elem(&scratch, &zero);
	if (!h)
		return -1;
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
	h->cpu = bpf_get_smp_processor_id();
	h->pad = 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	if (type == MP_EV_STACK && (t = target_lookup(tgid)) && (t->flags & MP_T_NEW_IMAGE)) {
		__sync_fetch_and_and(&t->flags, ~MP_T_NEW_IMAGE);
		wake = true;
	}
	return stack_capture(ctx, h, wake);
}

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
	case 6:
		return PT_REGS_PARM6_CORE(ctx);
	}
	return 0;
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

#endif
