// SPDX-License-Identifier: GPL-2.0
/*
 * Stack samples of growth (dwarf or frame pointers), their rate cap, and the origins of
 * mappings (the stack that created them).
 */
#include "helpers.h"

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
static __always_inline int sample_dwarf(void *ctx, struct mp_stack_event *h, bool wake)
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
	bpf_ringbuf_submit(buf, ring_wake(wake));
	return 0;
}

/* fp mode: the kernel's frame-pointer walk */
static __always_inline int sample_fp(void *ctx, struct mp_stack_event *h, bool wake)
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
	bpf_ringbuf_submit(buf, ring_wake(wake));
	return 0;
}

/*
 * The stack copy as a subprogram, verified once per program instead of at every call site
 * (most of the verifier's time at start-up). ctx is the program's context (arg:ctx).
 */
__noinline int stack_capture(void *ctx __arg_ctx,
			     struct mp_stack_event *h, bool wake)
{
	if (!h)
		return -ENOENT;
	/* h->mode is dwarf exactly when the configuration's is (origins take fp otherwise): the
	 * read-only configuration lets the verifier skip the mode not in use */
	return cfg.stack_mode == MP_STACKS_DWARF ? sample_dwarf(ctx, h, wake)
						 : sample_fp(ctx, h, wake);
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
			 ts->map.kind != MP_MAP_UNKNOWN && !ts->grew_unmapped ? ts->vm_start : 0,
			 0, 0);
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
