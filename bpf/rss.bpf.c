// SPDX-License-Identifier: GPL-2.0
/*
 * RSS accounting: exact sizes from the per-CPU counters, the address spaces' entries,
 * growth and shrink per phase and class, peaks and the guard (rss_stat).
 */
#include "helpers.h"
#include "mm.h"

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

struct resync_ctx {
	__u64 counters;		/* the counter's per-CPU parts */
	__u64 count_at;		/* &its count */
	__u32 k, me, all;	/* the class, this CPU, RSS_ALL: take the other CPUs' changes */
	__u32 slot, mm_id, seq;	/* the address space's shares */
	__u32 busy;		/* another CPU was summing this counter too */
	__u32 err;
	__s64 c1, c2;		/* count before and after a pass over the CPUs */
	__s32 own;		/* this CPU's part (pages) */
	__s64 parts;		/* every CPU's part (pages) */
	__s64 others;		/* bytes: what the other CPUs hold or will take themselves */
};

/*
 * Step i of passes over the CPUs (i modulo the CPUs: one call site of bpf_loop(), verified
 * once), until count reads the same after a pass as before it, as percpu_counter_sum() reads
 * it under the counter's lock; at most 4 passes (then the last one's). One CPU's part of the
 * counter and, for another CPU, what the sum must leave to it: its share without the part it
 * held at its last look (base[]), when its part is not 0 (its next event takes what the part
 * moved since), else its share less its part (its next event sums). A CPU without a share of
 * this address space holds nothing. With all, the sum takes the CPU's change too, and the
 * CPU's next event sums.
 */
static long resync_cb(__u64 i, void *data)
{
	struct resync_ctx *x = data;
	__u32 n = nr_cpus, cpu, k;
	struct mp_mm_pc *pc;
	__s32 l;

	if (!n || n > MP_MAX_CPUS) {
		x->err = 1;
		return 1;
	}
	cpu = i % n;
	/* the verifier must see the index bounded: no mask the compiler can drop */
	barrier_var(cpu);
	cpu &= MP_MAX_CPUS - 1;
	k = x->k & (MP_NR_CLASSES - 1);
	if (!cpu) {
		x->c1 = x->c2;
		x->busy = 0;
		x->own = 0;
		x->parts = x->others = 0;
	}
	if (bpf_probe_read_kernel(&l, sizeof(l),
				  (void *)(x->counters + pcpu_off[cpu]))) {
		x->err = 1;
		return 1;
	}
	x->parts += l;
	if (cpu == x->me) {
		x->own = l;
		goto next;
	}
	pc = bpf_map_lookup_percpu_elem(&mmpc, &x->slot, cpu);
	if (!pc || pc->mm_id != x->mm_id || pc->seq != x->seq) {
		x->others -= (__s64)l << 12;
		goto next;
	}
	/* before its base[] and part[]: see rss_amount_of() */
	if (pc->busy)
		x->busy = 1;
	if (x->all)
		__sync_fetch_and_and(&pc->seen, ~(1U << k));
	barrier();
	if (!x->all && (pc->seen & (1U << k)) && l)
		x->others += pc->base[k];
	else
		x->others += pc->part[k] - ((__s64)l << 12);
next:
	if (cpu + 1 < n)
		return 0;
	if (bpf_probe_read_kernel(&x->c2, sizeof(x->c2), (void *)x->count_at)) {
		x->err = 1;
		return 1;
	}
	return x->c1 == x->c2;
}

/*
 * The change of class member's size of mm that an rss_stat event on this CPU reports
 * (bytes), accounted in the CPU's share pc (see struct mp_mm_pc), into *ch. While this
 * CPU's part of the kernel's counter is not 0, what it moved since the CPU's last look: a
 * fold leaves the folding CPU's part at 0, so none ran here, and other CPUs' folds do not
 * change this CPU's part. At a part of 0 (or with RSS_WHOLE in member, or a first look)
 * the counter is summed: the share takes the sum less the sizes held and less what each
 * other CPU's part moved since its last look, which that CPU's next event takes. With
 * RSS_ALL (the teardown of an exited or replaced image: no event of its threads
 * follows) it takes those changes too, and the other CPUs sum at their next event. 0; -1:
 * the counter could not be read; 1: not now (another CPU was summing it: the next event
 * of this CPU sums and takes this one's change).
 *
 * A CPU sums under its busy flag, set before it reads count (the atomic orders the flag
 * before the reads) and cleared once its share holds the change; a sum that finds another
 * CPU busy is not taken, so that two sums never both take one fold. Taking every CPU's
 * change at each sum, as an earlier design did, sent a change whose own event had not run
 * yet to another event's mapping, and each sum that found another CPU inside any event was
 * put off to the CPU's next event, in another mapping maybe (docs/performance.md,
 * 2026-12-02: the mappings' growth with threads).
 *
 * rss_stat calls it as the global subprogram rss_amount(), verified once (inlined, it was
 * verified at every state of rss_stat that reached it: 5k of its 25k instructions walked,
 * 11 of its 29 ms); rss_sync() inlines it, since its mm (current's, read from the task) is
 * not trusted.
 */
#define RSS_WHOLE	0x100
#define RSS_ALL		0x200

static __always_inline int rss_amount_of(struct mm_struct *mm, __u32 member, struct mp_mm *e,
					 struct mp_mm_pc *pc, struct rss_change *ch)
{
	bool all = member & RSS_ALL, whole = all || (member & RSS_WHOLE);
	const struct percpu_counter *ctr;
	struct resync_ctx x = {};
	__u32 bit, cpu, k;
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
	cpu = bpf_get_smp_processor_id();
	if (cpu >= MP_MAX_CPUS)
		return -1;
	if (!whole && (pc->seen & bit)) {
		if (bpf_probe_read_kernel(&own, sizeof(own),
				(void *)((__u64)ctr->counters + pcpu_off[cpu & (MP_MAX_CPUS - 1)])))
			return -1;
		if (own) {
			ch->amount = (__s64)(own - pc->local[k]) << 12;
			pc->local[k] = own;
			pc->part[k] += ch->amount;
			return 0;
		}
	}
	__sync_fetch_and_or(&pc->busy, 1);
	x.counters = (__u64)ctr->counters;
	x.count_at = (__u64)&ctr->count;
	x.k = k;
	x.me = cpu;
	x.all = all;
	x.slot = e->mm_id & (MP_MMPC_SLOTS - 1);
	x.mm_id = e->mm_id;
	x.seq = e->seq;
	x.c2 = ctr->count;
	bpf_loop(4 * nr_cpus, resync_cb, &x, 0);
	if (x.err || x.busy) {
		/* the next event sums again */
		pc->seen &= ~bit;
		barrier();
		pc->busy = 0;
		return x.err ? -1 : 1;
	}
	ch->size = (x.c1 + x.parts) << 12;
	ch->amount = ((x.c1 + x.own) << 12) - e->rss[k] - pc->part[k] - x.others;
	pc->part[k] += ch->amount;
	pc->base[k] = pc->part[k] - ((__s64)x.own << 12);
	pc->local[k] = x.own;
	pc->seen |= bit;
	barrier();
	pc->busy = 0;
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
		if (member != MP_SWAP && total - amount > mm->peak_total) {
			mm->peak_total = total - amount;
			/* a new high, ended here: when, and its classes (rare: one per high) */
			v[member] = old;
			mm->peak_ns = bpf_ktime_get_ns();
			__builtin_memcpy(mm->peak_rss, v, sizeof(v));
		}
		/* a forked child giving back what it inherited never grew it here */
		floor = mm->floor[member];
		if (size < floor)
			mm->floor[member] = size;
		if (old > floor) {
			s->shrink[member] += old - (size > floor ? size : floor);
			ivl_shrink_add(t, member, old - (size > floor ? size : floor));
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
	call_add(t, member, amount);
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
	bool over;
	int err;

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
	/* an exited or replaced image's teardown: no event of its threads follows */
	over = !curr && ((t->flags & MP_T_EXITED) || e->gen != t->mm_gen);
	err = rss_amount(mm, member | (over ? RSS_ALL : 0), e, pc, &ch);
	if (err) {
		struct mp_drops *d = err < 0 ? drops_get() : NULL;

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
