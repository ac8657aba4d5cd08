// SPDX-License-Identifier: GPL-2.0
/*
 * Probe (issue 12): can tp_btf/rss_stat, which only sees the approximate percpu_counter,
 * reconstruct the exact size the classic kmem:rss_stat computes? The kernel's BTF has no
 * __percpu tag and this_cpu_off/__per_cpu_offset cannot be resolved (KALLSYMS_ALL=n), so
 * bpf_per_cpu_ptr() on mm->rss_stat[].counters is refused. The per-CPU offsets can be had
 * from a percpu array map instead: its percpu base pointer (struct bpf_array.pptrs[0], read
 * from the map struct by bpf_probe_read_kernel: arithmetic on a map pointer is refused) and
 * bpf_map_lookup_percpu_elem(map, 0, cpu) (base + that CPU's offset). The sum is count plus
 * every CPU's counter, re-read while count moved (a fold ran in between), as
 * percpu_counter_sum() does under the counter's lock. Both programs are attached to the same
 * tracepoint; the classic one runs first and leaves its size for the tp_btf one to compare.
 * For the anon counter of the target (its own mm only). Build and run: see run.sh.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
char LICENSE[] SEC("license") = "GPL";
const volatile int target_tgid = 0;
const volatile int ncpu = 2;

/* only for the per-CPU offsets: see above */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} pcm SEC(".maps");

s64 stash[64];		/* per CPU: the classic event's exact size, in pages */
u64 mapbuf[48];		/* a copy of pcm's struct bpf_array, for its pptrs[0] */
u64 n_btf, n_tp, n_eq, n_ne, n_retry, n_fail, maxdiff;
s64 lastdiff;

SEC("tp_btf/rss_stat")
int BPF_PROG(on_btf, struct mm_struct *mm, int member)
{
	u32 zero = 0, cpu, i;
	u64 base = 0, off;
	s64 c1, c2, sum, l;
	s32 *counters;
	struct bpf_array *arr = (void *)&pcm;
	int try;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid || member != 1 ||
	    bpf_get_current_task_btf()->mm != mm)
		return 0;
	n_btf++;
	{
		u32 o = bpf_core_field_offset(struct bpf_array, pptrs);
		if (o > sizeof(mapbuf) - 8 || bpf_probe_read_kernel(mapbuf, sizeof(mapbuf), arr))
			{ n_fail++; return 0; }
		base = *(u64 *)((char *)mapbuf + (o & 511));
	}
	counters = BPF_CORE_READ(mm, rss_stat[1].counters);
	for (try = 0; try < 4; try++) {
		c1 = BPF_CORE_READ(mm, rss_stat[1].count);
		sum = c1;
		for (i = 0; i < 8 && i < ncpu; i++) {
			void *p = bpf_map_lookup_percpu_elem(&pcm, &zero, i);
			if (!p) { n_fail++; return 0; }
			u64 pv = 0;
			bpf_probe_read_kernel(&pv, 8, &p);
			off = pv - base;
			l = 0;
			bpf_probe_read_kernel(&l, 4, (void *)counters + off);
			sum += (s32)l;
		}
		c2 = BPF_CORE_READ(mm, rss_stat[1].count);
		if (c1 == c2)
			break;
		n_retry++;
	}
	cpu = bpf_get_smp_processor_id() & 63;
	{
		s64 d = (sum < 0 ? 0 : sum) - stash[cpu];
		if (!d) n_eq++; else { n_ne++; lastdiff = d; if (d < 0) d = -d; if (d > maxdiff) maxdiff = d; }
	}
	return 0;
}

SEC("tp/kmem/rss_stat")
int on_tp(struct trace_event_raw_rss_stat *ctx)
{
	u32 cpu;
	s64 pages, d;
	int member = ctx->member;
	long size = ctx->size;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid || member != 1 || !ctx->curr)
		return 0;
	n_tp++;
	pages = size >> 12;
	cpu = bpf_get_smp_processor_id() & 63;
	stash[cpu] = pages;
	return 0;
}
