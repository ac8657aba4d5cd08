// SPDX-License-Identifier: GPL-2.0
/*
 * memphase BPF side: per-phase RSS growth of a set of target processes.
 *
 * Tracepoints only (kprobes and fentry are unavailable on some kernels):
 *   exceptions:page_fault_user   faults per phase
 *   kmem:rss_stat                exact RSS per class -> growth/shrink per phase, peaks
 *   syscalls mmap/munmap/mremap/brk
 *   sched fork/exec/exit         follow children, notice exits
 *   oom:mark_victim              OOM kills of targets
 * and one uprobe program for every phase marker (the cookie says which phase).
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

const volatile struct mp_config cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MP_MAX_TARGETS);
	__type(key, __u32);			/* tgid */
	__type(value, struct mp_target);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MP_MAX_MMS);
	__type(key, __u32);			/* rss_stat mm_id */
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

static __always_inline struct mp_target *target_of_current(__u32 *tgid_out)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_target *t = bpf_map_lookup_elem(&targets, &tgid);

	if (!t || (t->flags & MP_T_WAIT_EXEC))
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

/* The growth since the previous marker call ends one "call" of the phase it ran in. */
static __always_inline void call_flush(struct mp_target *t)
{
	struct mp_phase_stats *s = stats_get(t->phase);
	__u64 g = __sync_lock_test_and_set(&t->call_growth, 0);

	if (s)
		hist_add(s, MP_HIST_CALL_GROWTH, g);
}

SEC("tp/exceptions/page_fault_user")
int handle_fault(struct trace_event_raw_exceptions *ctx)
{
	struct mp_target *t = target_of_current(NULL);
	struct mp_phase_stats *s;

	if (!t)
		return 0;
	s = stats_get(t->phase);
	if (s)
		s->faults++;
	return 0;
}

/*
 * kmem:rss_stat carries the exact size of one RSS counter of an mm (the classic
 * tracepoint sums the per-CPU counter; raw/BTF variants only see an approximation).
 * curr says whether the mm is current's: otherwise (reclaim, exit teardown, fork copy)
 * the mm is found by its id, learnt from earlier curr=1 events.
 */
SEC("tp/kmem/rss_stat")
int handle_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	/* clang 14: read ctx fields once into locals (see PLATFORM.md item 1) */
	__u32 mm_id = ctx->mm_id, curr = ctx->curr;
	int member = ctx->member;
	__s64 size = ctx->size, delta, total;
	struct mp_phase_stats *s;
	struct mp_target *t;
	struct mp_mm *mm, fresh = {};
	__u32 tgid, bit;

	if (member < 0 || member >= MP_NR_CLASSES)
		return 0;
	if (curr) {
		t = target_of_current(&tgid);
		if (!t)
			return 0;
		mm = bpf_map_lookup_elem(&mms, &mm_id);
		if (!mm) {
			fresh.tgid = tgid;
			/* after exec the new mm starts empty: count from zero */
			if (t->flags & MP_T_FRESH_MM) {
				fresh.seeded = (1 << MP_NR_CLASSES) - 1;
				__sync_fetch_and_and(&t->flags, ~MP_T_FRESH_MM);
			}
			if (bpf_map_update_elem(&mms, &mm_id, &fresh, BPF_NOEXIST) &&
			    bpf_map_lookup_elem(&mms, &mm_id) == NULL) {
				struct mp_drops *d = drops_get();

				if (d)
					d->mms_full++;
				return 0;
			}
			mm = bpf_map_lookup_elem(&mms, &mm_id);
			if (!mm)
				return 0;
		}
	} else {
		mm = bpf_map_lookup_elem(&mms, &mm_id);
		if (!mm)
			return 0;
		tgid = mm->tgid;
		t = bpf_map_lookup_elem(&targets, &tgid);
		if (!t)
			return 0;
	}

	bit = 1U << member;
	member &= MP_NR_CLASSES - 1;
	if (!(mm->seeded & bit)) {
		/* attach: the first event only sets the baseline */
		mm->rss[member] = size;
		__sync_fetch_and_or(&mm->seeded, bit);
		delta = 0;
	} else {
		delta = size - mm->rss[member];
		mm->rss[member] = size;
	}
	if (size > mm->peak[member])
		mm->peak[member] = size;
	total = mm->rss[MP_FILE] + mm->rss[MP_ANON] + mm->rss[MP_SHMEM];
	if (total > mm->peak_total)
		mm->peak_total = total;
	if (!delta)
		return 0;

	s = stats_get(t->phase);
	if (!s)
		return 0;
	if (delta > 0) {
		s->growth[member] += delta;
		if (member != MP_SWAP)
			__sync_fetch_and_add(&t->call_growth, delta);
	} else {
		s->shrink[member] += -delta;
	}
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

SEC("tp/syscalls/sys_enter_mmap")
int handle_enter_mmap(struct trace_event_raw_sys_enter *ctx)
{
	__u64 len = ctx->args[1], prot = ctx->args[2], fd = ctx->args[4];

	return inflight_save(len, 0, prot, (__s32)fd);
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
 * A target mapped code from a file: a library loaded at start-up or by dlopen. If the
 * file is new, tell user space (which probes its phase markers) and, in run mode, stop
 * the target until the probes are in place so no marker call is missed.
 */
static __always_inline void exec_map_notice(__u32 tgid, struct mp_target *t, __u64 addr)
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
	if (bpf_map_update_elem(&seen_files, &key, &one, BPF_NOEXIST))
		return;		/* seen before (or map full: nothing more to do) */
	e = event_new(MP_EV_EXEC_MAP, tgid, t->phase);
	if (!e)
		return;
	e->addr = vf.start;
	e->ino = vf.ino;
	e->dev = vf.dev;
	if (cfg.stop_on_exec_map)
		bpf_send_signal(SIGSTOP);
	event_submit(e, true);
}

SEC("tp/syscalls/sys_exit_mmap")
int handle_exit_mmap(struct trace_event_raw_sys_exit *ctx)
{
	long ret = ctx->ret;
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;
	__u32 tgid;

	if (!inflight_take(&in))
		return 0;
	t = target_of_current(&tgid);
	if (!t || sys_failed(ret))
		return 0;
	s = stats_get(t->phase);
	if (s) {
		s->mmap_bytes += in.len;
		hist_add(s, MP_HIST_MMAP_SIZE, in.len);
	}
	if ((in.prot & PROT_EXEC) && in.fd >= 0)
		exec_map_notice(tgid, t, ret);
	return 0;
}

SEC("tp/syscalls/sys_enter_munmap")
int handle_enter_munmap(struct trace_event_raw_sys_enter *ctx)
{
	return inflight_save(ctx->args[1], 0, 0, -1);
}

SEC("tp/syscalls/sys_exit_munmap")
int handle_exit_munmap(struct trace_event_raw_sys_exit *ctx)
{
	long ret = ctx->ret;
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;

	if (!inflight_take(&in) || ret)
		return 0;
	t = target_of_current(NULL);
	if (!t)
		return 0;
	s = stats_get(t->phase);
	if (s)
		s->munmap_bytes += in.len;
	return 0;
}

SEC("tp/syscalls/sys_enter_mremap")
int handle_enter_mremap(struct trace_event_raw_sys_enter *ctx)
{
	return inflight_save(ctx->args[1], ctx->args[2], 0, -1);
}

SEC("tp/syscalls/sys_exit_mremap")
int handle_exit_mremap(struct trace_event_raw_sys_exit *ctx)
{
	long ret = ctx->ret;
	struct mp_phase_stats *s;
	struct inflight in;
	struct mp_target *t;

	if (!inflight_take(&in) || sys_failed(ret))
		return 0;
	t = target_of_current(NULL);
	if (!t)
		return 0;
	s = stats_get(t->phase);
	if (!s)
		return 0;
	if (in.len2 > in.len) {
		s->mmap_bytes += in.len2 - in.len;
		hist_add(s, MP_HIST_MMAP_SIZE, in.len2);
	} else {
		s->munmap_bytes += in.len - in.len2;
	}
	return 0;
}

SEC("tp/syscalls/sys_exit_brk")
int handle_exit_brk(struct trace_event_raw_sys_exit *ctx)
{
	__u64 ret = ctx->ret, last;
	struct mp_phase_stats *s;
	struct mp_target *t;

	t = target_of_current(NULL);
	if (!t)
		return 0;
	last = t->last_brk;
	t->last_brk = ret;
	/* the first brk of an exec'd image (or after attach) only sets the baseline */
	if (!last || ret == last)
		return 0;
	s = stats_get(t->phase);
	if (!s)
		return 0;
	if (ret > last)
		s->brk_bytes += ret - last;
	else
		s->brk_shrink_bytes += last - ret;
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
	pt = bpf_map_lookup_elem(&targets, &ptgid);
	if (!pt || (pt->flags & MP_T_WAIT_EXEC))
		return 0;
	ct.phase = pt->phase;
	ct.parent = ptgid;
	if (bpf_map_update_elem(&targets, &ctgid, &ct, BPF_ANY)) {
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

SEC("tp/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_target *t = bpf_map_lookup_elem(&targets, &tgid);
	struct mp_event *e;

	if (!t)
		return 0;
	__sync_fetch_and_and(&t->flags, ~MP_T_WAIT_EXEC);
	__sync_fetch_and_or(&t->flags, MP_T_FRESH_MM);
	t->last_brk = 0;
	e = event_new(MP_EV_EXEC, tgid, t->phase);
	if (e)
		event_submit(e, false);
	return 0;
}

SEC("tp/sched/sched_process_exit")
int handle_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	struct mp_target *t;
	struct mp_event *e;
	bool group_dead = ctx->group_dead;

	if (!group_dead)
		return 0;
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t || (t->flags & MP_T_EXITED))
		return 0;
	__sync_fetch_and_or(&t->flags, MP_T_EXITED);
	call_flush(t);
	e = event_new(MP_EV_EXIT, tgid, t->phase);
	if (!e)
		return 0;
	task = bpf_get_current_task_btf();
	/* wait(2)-style status: the exit code << 8, or the killing signal */
	e->arg = BPF_CORE_READ(task, signal, group_exit_code);
	if (!e->arg)
		e->arg = BPF_CORE_READ(task, exit_code);
	event_submit(e, true);
	return 0;
}

SEC("tp/oom/mark_victim")
int handle_mark_victim(struct trace_event_raw_mark_victim *ctx)
{
	__u32 pid = ctx->pid, off = ctx->__data_loc_comm & 0xffff;
	__u64 anon = ctx->anon_rss, file = ctx->file_rss, shmem = ctx->shmem_rss;
	struct mp_target *t = bpf_map_lookup_elem(&targets, &pid);
	struct mp_event *e;

	if (!t)
		return 0;
	e = event_new(MP_EV_OOM, pid, t->phase);
	if (!e)
		return 0;
	/* the tracepoint's rss fields are in kB */
	e->rss[MP_ANON] = anon << 10;
	e->rss[MP_FILE] = file << 10;
	e->rss[MP_SHMEM] = shmem << 10;
	e->pid = pid;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), (void *)ctx + off);
	event_submit(e, true);
	return 0;
}

/* ---- phase markers ---- */

/*
 * One program for every marker uprobe: the attach cookie holds the kind and phase.
 * llama_decode takes struct llama_batch by value (larger than 16 bytes, so on the
 * stack): at function entry its first field, n_tokens, is at sp + 8 on x86-64.
 */
SEC("uprobe")
int handle_marker(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 kind = (cookie >> 8) & 0xff, phase = cookie & 0xff, tgid, old;
	struct mp_phase_stats *s;
	struct mp_target *t;
	struct mp_event *e;

	t = target_of_current(&tgid);
	if (!t)
		return 0;
	if (kind == MP_MARK_DECODE) {
		__s32 n_tokens = 0;

		bpf_probe_read_user(&n_tokens, sizeof(n_tokens), (void *)(PT_REGS_SP(ctx) + 8));
		phase = n_tokens > 1 ? cfg.phase_prompt : cfg.phase_generate;
	}
	phase &= MP_MAX_PHASES - 1;
	call_flush(t);
	old = t->phase;
	s = stats_get(phase);
	if (s)
		s->calls++;
	if (phase == old)
		return 0;
	t->phase = phase;
	if (s)
		s->entries++;
	e = event_new(MP_EV_PHASE, tgid, old);
	if (!e)
		return 0;
	e->arg = phase;
	event_submit(e, false);
	return 0;
}
