// SPDX-License-Identifier: GPL-2.0
/*
 * The fault path: a user fault's address and the VMA it is in (the thread's cache of VMAs,
 * bpf_find_vma when the address space is free), classified.
 */
#include "helpers.h"

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
	c = call_pc_get(t);
	if (c)
		c->ivl_faults++;
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
