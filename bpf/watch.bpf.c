// SPDX-License-Identifier: GPL-2.0
/*
 * memphase watch: every exec on the machine, filtered by its new comm when the supervisor
 * matches by comm, to a small ring buffer (struct mp_exec_event). The supervisor decides
 * the rest (--exe, --cgroup, who is already watched) from /proc. One tracepoint; nothing
 * else is followed here (each watched process gets its own `memphase attach`).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memphase.h"

char LICENSE[] SEC("license") = "GPL";

/* set before load: match this comm only (filter_comm_on), else send every exec */
const volatile bool filter_comm_on = false;
const volatile char filter_comm[MP_COMM_LEN] = {};

__u64 lost = 0;		/* execs that found the ring buffer full */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} execs SEC(".maps");

SEC("tp/sched/sched_process_exec")
int handle_watch_exec(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mp_exec_event *e;
	char comm[MP_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	if (filter_comm_on) {
		for (i = 0; i < MP_COMM_LEN; i++) {
			if (comm[i] != filter_comm[i])
				return 0;
			if (!comm[i])
				break;
		}
	}
	e = bpf_ringbuf_reserve(&execs, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	__builtin_memcpy(e->comm, comm, sizeof(comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}
