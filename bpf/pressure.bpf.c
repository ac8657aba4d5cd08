// SPDX-License-Identifier: GPL-2.0
/*
 * Memory pressure and OOM kills: a victim's memory cgroup and sizes, the time targets spend
 * in direct and memory-cgroup reclaim.
 */
#include "mm.h"

/*
 * Was it the memory cgroup? A cgroup OOM kill happens when a charge finds the victim's
 * memory cgroup (or an ancestor) at its limit: look for one whose usage is within
 * 64 pages of its max.
 */
static __always_inline void oom_memcg(struct task_struct *victim, struct mp_event *e)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;
	/* read, not loaded: a pointer loaded from a trusted one costs the verifier walks of
	 * the kernel's BTF (~1 ms a visit); an OOM kill is no hot path */
	struct css_set *cset = BPF_CORE_READ(victim, cgroups);
	int i;

	if (!cset || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return;
	bpf_probe_read_kernel(&css, sizeof(css), &cset->subsys[id]);
	for (i = 0; i < 8 && css; i++) {
		/* css is the first member of struct mem_cgroup */
		struct mem_cgroup *memcg = (struct mem_cgroup *)css;
		__u64 max = BPF_CORE_READ(memcg, memory.max);
		__s64 usage = BPF_CORE_READ(memcg, memory.usage.counter);

		if (max < (1ULL << 50) && usage + 64 >= (__s64)max) {
			e->cg_id = BPF_CORE_READ(css, cgroup, kn, id);
			e->cg_limit = max << 12;
			bpf_probe_read_kernel_str(e->cg_name, sizeof(e->cg_name),
						  BPF_CORE_READ(css, cgroup, kn, name));
			return;
		}
		css = BPF_CORE_READ(css, parent);
	}
}

SEC("tp_btf/mark_victim")
int BPF_PROG(handle_mark_victim, struct task_struct *victim, uid_t uid)
{
	__u32 tgid = victim->tgid;
	struct mp_target *t = target_lookup(tgid);
	/* pointers read, not loaded, from victim (see oom_memcg()) */
	struct mm_struct *mm = BPF_CORE_READ(victim, mm);
	struct mp_event *e;

	/* one that left the observation is not the user's to see */
	if (!t || (t->flags & MP_T_LEFT))
		return 0;
	e = event_new(MP_EV_OOM, tgid, t->phase);
	if (!e)
		return 0;
	/* current is whoever ran out of memory, not the victim */
	e->tid = victim->pid;
	if (mm) {
		e->rss[MP_ANON] = mm_counter(mm, MM_ANONPAGES);
		e->rss[MP_FILE] = mm_counter(mm, MM_FILEPAGES);
		e->rss[MP_SHMEM] = mm_counter(mm, MM_SHMEMPAGES);
		e->rss[MP_SWAP] = mm_counter(mm, MM_SWAPENTS);
	}
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), victim->comm);
	oom_memcg(victim, e);
	event_submit(e, true);
	return 0;
}

/* ---- memory pressure: time target threads spend reclaiming memory themselves ---- */

static __always_inline int reclaim_begin(void)
{
	struct thread_state *ts;

	if (!target_of_current(NULL))
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->reclaim_start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int reclaim_end(unsigned long nr_reclaimed)
{
	struct mp_phase_stats *s;
	struct thread_state *ts;
	struct mp_target *t;
	__u64 start;

	t = target_of_current(NULL);
	if (!t)
		return 0;
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (!ts || !ts->reclaim_start_ns)
		return 0;
	start = ts->reclaim_start_ns;
	ts->reclaim_start_ns = 0;
	s = stats_get(t->phase);
	if (!s)
		return 0;
	s->reclaim_ns += bpf_ktime_get_ns() - start;
	s->reclaim_count++;
	s->reclaimed_pages += nr_reclaimed;
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(handle_reclaim_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(handle_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}

/* Reaching a memory cgroup's limit makes the charging thread reclaim in the cgroup. */
SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(handle_memcg_reclaim_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(handle_memcg_reclaim_end, unsigned long nr_reclaimed)
{
	return reclaim_end(nr_reclaimed);
}
