// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data from the profile's raw samples. One event for the whole run; the phase is a
 * thread: every process gets one thread per phase it sampled in, named after the phase and
 * numbered above any real thread id (perf_phase_tid()), so perf report's default sort
 * (comm first) and --sort comm or tid put the phases side by side in one view, every name
 * whole (one COMM per thread: perf sizes its comm column by a thread's first comm), and
 * the process keeps its own name (its main thread's comm, which never changes). The
 * thread that took a sample is not kept. Each phase's growth no sample carries is one more
 * sample at the phase's end, in a mapping named "[not sampled]".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/perfdata.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "report/perf.h"

/* PID_MAX_LIMIT on 64-bit: every real thread id is below it */
#define PERF_TID_BASE		(1U << 22)
/* where "[not sampled]" is mapped: below mmap_min_addr, never a real mapping */
#define PERF_NOT_SAMPLED_ADDR	0x1000ULL
#define PERF_NOT_SAMPLED	"[not sampled]"

/* a (process, phase) thread whose COMM record is written */
struct perf_thread {
	__u32 pid;
	__u32 phase;
};

struct perf_out {
	const struct model *m;
	struct perfdata *pd;
	struct perf_thread *threads;
	size_t nthreads, capthreads;
};

static const char *phase_name(const struct model *m, unsigned int id)
{
	return id < MP_MAX_PHASES && m->names[id][0] ? m->names[id] : "[unknown]";
}

/* the thread of process pid that stands for phase: (phase + 1) * 2^22 + pid */
static __u32 perf_phase_tid(__u32 pid, __u32 phase)
{
	return (phase + 1) * PERF_TID_BASE + pid % PERF_TID_BASE;
}

/* the sampled processes: their name, then their code mappings */
static int perf_procs(struct perfdata *pd, const struct profile *p)
{
	size_t i, k;
	char *comm;
	int err;

	for (i = 0; i < p->nprocs; i++) {
		const struct profile_proc *pp = &p->procs[i];

		comm = pp->comm[0] ? utf8__sanitize(pp->comm) : strdup("memphase-target");
		err = comm ? perfdata__comm(pd, pp->pid, pp->pid, 0, comm, true) : -ENOMEM;
		free(comm);
		if (err)
			return err;
		for (k = 0; k < p->nmaps; k++) {
			const struct profile_map *pm = &p->maps[k];

			if (pm->pid != pp->pid)
				continue;
			err = perfdata__mmap(pd, pm->pid, pm->pid, 0, pm->start, pm->end - pm->start,
					     pm->pgoff, pm->path, pm->build_id, pm->build_id_len);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The thread of (pid, phase), named after the phase the first time it is used. */
static int perf_thread(struct perf_out *o, __u32 pid, __u32 phase, __u32 *tid)
{
	size_t i;
	int err;

	*tid = perf_phase_tid(pid, phase);
	for (i = 0; i < o->nthreads; i++)
		if (o->threads[i].pid == pid && o->threads[i].phase == phase)
			return 0;
	if (util__grow((void **)&o->threads, &o->capthreads, o->nthreads, sizeof(*o->threads)))
		return -ENOMEM;
	err = perfdata__comm(o->pd, pid, *tid, 0, phase_name(o->m, phase), false);
	if (err)
		return err;
	o->threads[o->nthreads].pid = pid;
	o->threads[o->nthreads++].phase = phase;
	return 0;
}

/* When phase id last ended (its last interval of the timeline), else the run's end. */
static __u64 phase_end(const struct model *m, unsigned int id)
{
	const struct history *h = &m->history;
	size_t i;

	if (!h->closed && m->cur_phase == id)
		return m->end_ns;
	for (i = h->niv; i > 0; i--)
		if (h->iv[i - 1].phase == id)
			return h->iv[i - 1].end_ns;
	return m->end_ns;
}

/* Each phase's growth no sample carries, in the main process: a "[not sampled]" sample. */
static int perf_unsampled(struct perf_out *o)
{
	const struct model *m = o->m;
	const struct model_proc *mp = model__main((struct model *)m);
	const __u64 ip = PERF_NOT_SAMPLED_ADDR;
	__u32 pid = mp ? mp->pid : m->root_pid, tid;
	bool mapped = false;
	unsigned int i, id;
	__u64 rest;
	int err;

	for (i = 0; i < m->norder; i++) {
		id = m->order[i];
		rest = model__unsampled(m, id);
		if (!rest)
			continue;
		if (!mapped) {
			err = perfdata__mmap(o->pd, pid, pid, 0, PERF_NOT_SAMPLED_ADDR, 4096, 0,
					     PERF_NOT_SAMPLED, NULL, 0);
			if (err)
				return err;
			mapped = true;
		}
		err = perf_thread(o, pid, id, &tid);
		if (err)
			return err;
		/* no CPU took it: 0 */
		err = perfdata__sample(o->pd, 0, pid, tid, 0, phase_end(m, id), rest, &ip, 1);
		if (err)
			return err;
	}
	return 0;
}

static int perf_samples(struct perf_out *o)
{
	const struct profile *p = &o->m->profile;
	size_t k;
	__u32 tid;
	int err;

	for (k = 0; k < p->nraw; k++) {
		const struct profile_sample *r = p->raw[k];

		if (!r->n)
			continue;	/* no address: nothing perf could show */
		err = perf_thread(o, r->pid, r->phase & (MP_MAX_PHASES - 1), &tid);
		if (err)
			return err;
		/* return addresses point after the call: perf expects them as they are */
		err = perfdata__sample(o->pd, 0, r->pid, tid, r->cpu, r->ts_ns, r->weight, r->ips,
				       r->n);
		if (err)
			return err;
	}
	return 0;
}

static int perf_write(FILE *f, const struct output_ctx *ctx)
{
	struct perf_out o = { .m = ctx->m };
	int err;

	o.pd = perfdata__new(f, NULL, 0);
	if (!o.pd)
		return -errno;
	err = perf_procs(o.pd, &o.m->profile);
	if (err)
		goto cleanup;
	err = perf_samples(&o);
	if (err)
		goto cleanup;
	err = perf_unsampled(&o);
	if (err)
		goto cleanup;
	err = perfdata__close(o.pd);
cleanup:
	free(o.threads);
	perfdata__free(o.pd);
	return err;
}

const struct output_format perf_format = {
	.name = "perf-data",
	.help = "Write a perf.data file (perf report/script -i FILE): one event, a thread per "
		"phase named after it (perf report --sort comm)",
	.needs = OUTPUT_NEEDS_STACKS | OUTPUT_NEEDS_RAW | OUTPUT_NEEDS_SEEK,
	.write = perf_write,
};
