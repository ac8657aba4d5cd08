// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation probes: pinned and managed host memory (the CUDA functions of struct
 * mp_alloc_rule), per phase and process.
 */
#include "helpers.h"

/* ---- allocation probes (pinned and managed memory: see struct mp_alloc_rule) ---- */

static __always_inline void allocs_full(void)
{
	struct mp_drops *d = drops_get();

	if (d)
		d->allocs_full++;
}

static __always_inline void alloc_event(__u32 type, __u32 tgid, __u32 phase, __u64 ptr,
					const struct mp_alloc_val *v)
{
	struct mp_alloc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct mp_drops *d;

	if (!e) {
		d = drops_get();
		if (d)
			d->ringbuf++;
		return;
	}
	e->type = type;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->phase = phase;
	e->ts_ns = bpf_ktime_get_ns();
	e->ptr = ptr;
	e->size = v->size;
	e->cls = v->cls;
	e->alloc_phase = v->phase;
	bpf_ringbuf_submit(e, ring_wake(false));
}

/* One stack sample per allocation (rare calls: no rate cap), weighted by its size. */
static __always_inline void alloc_sample(void *ctx, __u32 tgid, __u32 phase, __u32 cls,
					 __u64 size)
{
	struct mp_drops *d;
	int err;

	if (cfg.stack_mode == MP_STACKS_NONE)
		return;
	err = stack_send(ctx, MP_EV_STACK, tgid, phase, cfg.stack_mode,
			 MP_STACK_CLS_ALLOC + cls, size, 0, 0, 0);
	if (err) {
		d = drops_get();
		if (d)
			d->stacks++;
	}
}

/* A free: forget the pointer if BPF saw it allocated, and say so. */
static __always_inline void alloc_free(__u32 tgid, struct mp_target *t, __u64 ptr)
{
	struct mp_alloc_key k = { .tgid = tgid, .ptr = ptr };
	struct mp_alloc_val *v, copy;

	v = bpf_map_lookup_elem(&allocs, &k);
	if (!v)
		return;		/* not ours: device memory, a nested call's second free */
	copy = *v;
	bpf_map_delete_elem(&allocs, &k);
	alloc_event(MP_EV_FREE, tgid, t->phase, ptr, &copy);
}

/*
 * Entry of an allocation probe: the cookie is the rule's index in cfg.allocs. Frees are
 * done here; allocations remember size and pointer (argument) until the call returns.
 */
SEC("uprobe")
int handle_alloc_entry(struct pt_regs *ctx)
{
	__u32 idx = (__u32)bpf_get_attach_cookie(ctx), tid, tgid;
	const volatile struct mp_alloc_rule *r;
	struct alloc_call *c, nc = {};
	struct mp_target *t;

	if (idx >= MP_MAX_ALLOC_RULES || idx >= cfg.nallocs)
		return 0;
	t = target_of_current(&tgid);
	if (!t)
		return 0;
	/* bound again: the checked copy was spilled across the calls above */
	r = &cfg.allocs[idx & (MP_MAX_ALLOC_RULES - 1)];
	if (r->op == MP_AOP_FREE) {
		alloc_free(tgid, t, rule_arg(ctx, r->ptr_arg));
		return 0;
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (c) {
		c->depth++;	/* a call inside the outer one: the outer one counts */
		return 0;
	}
	nc.size = rule_arg(ctx, r->size_arg);
	nc.ptr = rule_arg(ctx, r->ptr_arg);
	nc.rule = idx;
	nc.depth = 1;
	if (bpf_map_update_elem(&alloc_calls, &tid, &nc, BPF_ANY))
		allocs_full();
	return 0;
}

/* Return of an allocation probe: on success, the pointer joins allocs and the model hears. */
SEC("uretprobe")
int handle_alloc_return(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), tgid;
	const volatile struct mp_alloc_rule *r;
	struct mp_alloc_key k = {};
	struct mp_alloc_val v = {};
	struct alloc_call *c, call;
	struct mp_target *t;
	struct mp_drops *d;
	__u64 ptr;

	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (!c)
		return 0;
	if (c->depth > 1) {
		c->depth--;
		return 0;
	}
	call = *c;
	bpf_map_delete_elem(&alloc_calls, &tid);
	if (call.rule >= MP_MAX_ALLOC_RULES)
		return 0;
	r = &cfg.allocs[call.rule & (MP_MAX_ALLOC_RULES - 1)];
	/* CUDA's status codes are 32-bit enums: 0 is success */
	if (r->ok_zero && (__u32)PT_REGS_RC(ctx) != 0)
		return 0;
	t = target_of_current(&tgid);
	if (!t)
		return 0;
	ptr = call.ptr;
	if (r->ptr_src == MP_PTR_OUT && bpf_probe_read_user(&ptr, sizeof(ptr), (void *)call.ptr)) {
		d = drops_get();
		if (d)
			d->alloc_unread++;
		return 0;
	}
	k.tgid = tgid;
	k.ptr = ptr;
	v.size = call.size;
	v.cls = r->cls < MP_NR_ALLOC_CLS ? r->cls : MP_ALLOC_PINNED;
	v.phase = t->phase;
	if (bpf_map_update_elem(&allocs, &k, &v, BPF_ANY))
		allocs_full();
	alloc_event(MP_EV_ALLOC, tgid, t->phase, ptr, &v);
	alloc_sample(ctx, tgid, t->phase, v.cls, v.size);
	return 0;
}
