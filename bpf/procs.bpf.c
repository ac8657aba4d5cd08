// SPDX-License-Identifier: GPL-2.0
/*
 * Processes: the invoking user's reach, fork, exec, the end of threads and processes, and
 * the task iterators (flush at the end, seed an attach).
 */
#include "mm.h"

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
	call_flush(t);
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
	__sync_fetch_and_or(&t->flags, MP_T_FRESH_MM | MP_T_NEW_IMAGE);
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
	call_flush(t);
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
