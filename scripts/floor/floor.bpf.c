// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of memphase's fault-path design, for scripts/bench.sh (floor_classic, floor_btf):
 * programs on the same tracepoints as memphase's that do nothing but find the target, the way
 * memphase's target_lookup() does (the tgid's home slot in an array; its other slots only
 * when the home is chained), and count its event in a per-CPU counter. What memphase
 * spends per fault above these is its own work.
 *   floor_fault        tp_btf/page_fault_user (memphase: handle_fault)
 *   floor_rss_classic  tp/kmem/rss_stat, the classic tracepoint (memphase: handle_rss_stat)
 *   floor_rss_btf      tp_btf/rss_stat (approximate counter; the loader loads one of the two)
 *   floor_fork         tp_btf/sched_process_fork: the target's children become targets
 *                      (the workload runs under runstat: the touch process is a grandchild)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "floor.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_TSLOTS);
	__type(key, __u32);			/* floor_tslot() */
	__type(value, struct floor_target);
} tslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct floor_counts);
} counts SEC(".maps");

/* memphase's target_lookup(): the home slot, or the others when the home is chained */
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

static __always_inline struct floor_counts *counts_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counts, &zero);
}

/* all a floor program does: find the current process among the targets, count (rss: the
 * RSS event, else the fault) */
static __always_inline int count_target(bool rss)
{
	struct floor_counts *c;

	if (!target_lookup(bpf_get_current_pid_tgid() >> 32))
		return 0;
	c = counts_get();
	if (c && rss)
		c->rss++;
	else if (c)
		c->faults++;
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(floor_fault, unsigned long addr, struct pt_regs *regs, unsigned long error_code)
{
	return count_target(false);
}

SEC("tp/kmem/rss_stat")
int floor_rss_classic(struct trace_event_raw_rss_stat *ctx)
{
	return count_target(true);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(floor_rss_btf, struct mm_struct *mm, int member)
{
	return count_target(true);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, i, slot;
	struct floor_target *home, *t;

	if (ptgid == ctgid || !target_lookup(ptgid))
		return 0;	/* a new thread, or not a target's child */
	/* memphase's target_add(): the home, or the first free other slot, chaining the home */
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
