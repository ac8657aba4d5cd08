/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address spaces (struct mp_mm), read by every unit that needs a process's RSS: the exact
 * size of an RSS counter from the kernel's per-CPU counter, an address space's entry and
 * the per-CPU shares of its growth, a target's peaks, the RSS an event carries.
 */
#ifndef __MP_MM_H
#define __MP_MM_H

#include "helpers.h"

/*
 * The exact size of an RSS counter, rebuilt from the kernel's per-CPU counter (the BTF
 * tracepoint passes the mm, not a size). The BTF has no __percpu tag, so bpf_per_cpu_ptr()
 * refuses the counter; each CPU's offset is learnt once from a percpu array map instead:
 * its per-CPU base (struct bpf_array's pptrs[0], copied out of the map struct: arithmetic
 * on a map pointer is refused) against bpf_map_lookup_percpu_elem() of each CPU (base plus
 * that CPU's offset). The sum is count plus every CPU's counter, read again while count
 * moved (a fold ran in between), as percpu_counter_sum() does under the counter's lock.
 */
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_base SEC(".maps");

extern __u64 pcpu_off[MP_MAX_CPUS];	/* each CPU's offset of per-CPU data */
extern __u32 pcpu_ready;		/* 1: learnt; 2: could not be (no exact sizes) */
extern __u64 pcpu_mapbuf[64];		/* a copy of pcpu_base's struct bpf_array */

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
MP_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MP_MMPC_SLOTS);
	__type(key, __u32);
	__type(value, struct mp_mm_pc);
} mmpc SEC(".maps");

extern __u32 mm_seq_next;	/* the seq of the next filling of an mms entry (0 is never one) */
/*
 * A bit per mms slot, set once the slot is claimed (after the claim itself): user space
 * reads only these slots, and clears a bit before it frees its slot.
 */
extern __u64 mms_used[MP_MAX_MMS / 64];

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
	__u32 busy;	/* another CPU's share was being moved */
	__s64 v[MP_NR_CLASSES];
};

static __maybe_unused long share_sum_cb(__u64 cpu, void *data)
{
	struct share_sum_ctx *x = data;
	struct mp_mm_pc *pc;
	int c;

	if (cpu >= nr_cpus)
		return 1;
	pc = bpf_map_lookup_percpu_elem(&mmpc, &x->slot, cpu);
	if (!pc || pc->mm_id != x->mm_id || pc->seq != x->seq)
		return 0;
	/* before its part[]: see rss_amount_of() */
	if (pc->busy && cpu != bpf_get_smp_processor_id())
		x->busy = 1;
	barrier();
	for (c = 0; c < MP_NR_CLASSES; c++)
		x->v[c] += pc->part[c];
	return 0;
}

/*
 * The sizes (bytes per class) of mm now: its entry's plus every CPU's share (reading
 * the other CPUs' lines: for sums, shrinks, phase events and the guard). 1 if another CPU
 * was moving its share meanwhile (its part[] may not hold its last change yet), else 0.
 */
static __always_inline int mm_sizes(const struct mp_mm *mm, __s64 *v)
{
	struct share_sum_ctx x = {
		.slot = mm->mm_id & (MP_MMPC_SLOTS - 1), .mm_id = mm->mm_id, .seq = mm->seq,
	};
	int c;

	bpf_loop(MP_MAX_CPUS, share_sum_cb, &x, 0);
	for (c = 0; c < MP_NR_CLASSES; c++)
		v[c] = mm->rss[c] + x.v[c];
	return x.busy;
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
			__sync_fetch_and_or(&mms_used[(slot / 64) & (MP_MAX_MMS / 64 - 1)],
					    1ULL << (slot & 63));
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
		mm->peak_rss[c] = 0;
	}
	mm->peak_total = v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
	mm->peak_ns = 0;
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

#endif
