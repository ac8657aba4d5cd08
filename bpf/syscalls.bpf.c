// SPDX-License-Identifier: GPL-2.0
/*
 * The address-space syscalls: mmap, munmap, mremap, brk (their bytes per phase, new code to
 * probe), and the windows in which their growth is deferred.
 */
#include "fpath.h"

/* ---- mapping origins: the stack that created a mapping, taken at the syscall's exit ---- */

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
	__u64 image;		/* in: tgid << 32 | mm_gen of the image mapping it */
	__u32 exec;		/* in: mapped executable */
	__u32 fresh;		/* out: 1, the file (and kind) not seen before (its path read);
				 * 2, code seen before but new to this image */
};

/*
 * The file of the VMA, and whether it is new. A new file's path is read here, under the
 * address-space lock that keeps the VMA and its file alive.
 */
static long vma_file_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_file *vf = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);
	struct file_key key = {};
	struct mp_fpath *fp;
	__u32 zero = 0;
	__u8 one = 1;

	vf->start = BPF_CORE_READ(vma, vm_start);
	if (!f)
		return 0;
	vf->ino = BPF_CORE_READ(f, f_inode, i_ino);
	vf->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	if (!vf->ino)
		return 0;
	key.ino = vf->ino;
	key.dev = vf->dev;
	key.exec = vf->exec;
	if (!bpf_map_update_elem(&seen_files, &key, &one, BPF_NOEXIST)) {
		vf->fresh = 1;
		fp = bpf_map_lookup_elem(&fpath_scratch, &zero);
		if (fp)
			fpath_read(f, fp);
	}
	/* code: seen in another image (a shell before its exec), new to this one */
	key.exec = vf->image;
	if (vf->exec && !bpf_map_update_elem(&image_files, &key, &one, BPF_NOEXIST) &&
	    !vf->fresh)
		vf->fresh = 2;
	return 0;
}

/*
 * A target mapped a file. Code (a library loaded at start-up or by dlopen): if the file
 * is new, user space probes its phase markers and, in run mode, the target stops until
 * the probes are in place so no marker call is missed; if only this image had not mapped
 * it, the target stops until user space's maps snapshot of it has the library (its stack
 * samples are unwound through it). Returns what backs the mapping (enum
 * mp_origin_backing), for its origin. Data (the model file): user space
 * learns its path from /proc/PID/maps, or from the path read here when the process has
 * unmapped the file or exited by then, to name the mapping later.
 */
static __always_inline __u32 map_notice(__u32 tgid, struct mp_target *t, __u64 addr, bool exec)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_file vf = { .exec = exec, .image = (__u64)tgid << 32 | t->mm_gen };
	struct mp_file_event *fe;
	struct mp_fpath *fp;
	__u32 zero = 0;
	bool busy;

	busy = bpf_find_vma(task, addr, vma_file_cb, &vf, 0) != 0;
	if (busy) {
		/*
		 * -EBUSY (the address space locked, or this CPU's deferred unlock of an
		 * earlier lookup still pending): the file is not known here, but user space
		 * finds it by the address. Nothing is marked seen: a library whose code
		 * mapping went unnoticed would never be probed (its markers never attach).
		 */
		vf.start = addr;
		vf.ino = 0;
		vf.dev = 0;
	} else if (!vf.fresh) {
		return vf.ino ? MP_BACKING_FILE : MP_BACKING_ANON;
	}
	fe = event_reserve(sizeof(*fe));
	if (!fe)
		return busy ? MP_BACKING_UNKNOWN : MP_BACKING_FILE;
	event_init(&fe->e, exec ? MP_EV_EXEC_MAP : MP_EV_FILE_MAP, tgid, t->phase);
	fe->e.addr = vf.start;
	fe->e.ino = vf.ino;
	fe->e.dev = vf.dev;
	/* the path was read for a file new to all images (fresh 1), not one new to this one */
	fp = busy || vf.fresh != 1 ? NULL : bpf_map_lookup_elem(&fpath_scratch, &zero);
	if (!fp || bpf_probe_read_kernel(&fe->fp, sizeof(fe->fp), fp))
		__builtin_memset(&fe->fp, 0, offsetof(struct mp_fpath, path));
	if (exec && stop_on_map) {
		__sync_fetch_and_or(&t->flags, MP_T_HELD);
		bpf_send_signal(SIGSTOP);
	}
	/* wake user space at once: the path is read from /proc/PID/maps while it lives */
	event_submit(&fe->e, true);
	return busy ? MP_BACKING_UNKNOWN : MP_BACKING_FILE;
}

/*
 * mmap, munmap, mremap and brk through the raw syscall tracepoints: two links instead of
 * seven perf tracepoints (each of which takes ~90 ms to detach), and the syscall number
 * is checked before any map lookup.
 */
static __always_inline void sys_exit_mmap(void *ctx, long ret)
{
	__u32 backing = MP_BACKING_ANON;
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
	/* a descriptor names a file, unless MAP_ANONYMOUS had it ignored (the VMA tells) */
	if (in.fd >= 0)
		backing = map_notice(tgid, t, ret, in.prot & PROT_EXEC);
	origin_send(ctx, tgid, t, ret, in.len, in.prot,
		    MP_ORIGIN_MMAP | backing << MP_ORIGIN_BACKING_SHIFT);
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
		origin_send(ctx, tgid, t, last, ret - last, 3,
			    MP_ORIGIN_BRK | MP_BACKING_ANON << MP_ORIGIN_BACKING_SHIFT);
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
