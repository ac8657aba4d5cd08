// SPDX-License-Identifier: GPL-2.0
/* perf.data from the profile's raw samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/perfdata.h"
#include "lib/utf8.h"
#include "report/perf.h"

struct tid_phase {
	__u32 tid;
	__u32 phase;
};

static const char *phase_name(const struct model *m, unsigned int id)
{
	return id < MP_MAX_PHASES && m->names[id][0] ? m->names[id] : "[unknown]";
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

static int perf_write(FILE *f, const struct output_ctx *ctx)
{
	const struct model *m = ctx->m;
	const struct profile *p = &m->profile;
	unsigned int event_of[MP_MAX_PHASES], nevents = 0, i;
	const char *events[MP_MAX_PHASES];
	bool have[MP_MAX_PHASES] = {};
	struct tid_phase *tp = NULL;
	struct perfdata *pd;
	size_t ntp = 0, k, j;
	int err;

	/* one event per phase, in the order entered; phases never entered (none, normally) after */
	for (i = 0; i < m->norder; i++) {
		have[m->order[i]] = true;
		event_of[m->order[i]] = nevents;
		events[nevents++] = phase_name(m, m->order[i]);
	}
	for (k = 0; k < p->nraw; k++) {
		i = p->raw[k]->phase & (MP_MAX_PHASES - 1);
		if (have[i] || !p->raw[k]->n)
			continue;
		have[i] = true;
		event_of[i] = nevents;
		events[nevents++] = phase_name(m, i);
	}
	pd = perfdata__new(f, events, nevents);
	if (!pd)
		return -errno;
	tp = calloc(p->nraw + 1, sizeof(*tp));
	if (!tp) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = perf_procs(pd, p);
	if (err)
		goto cleanup;
	/* raw samples are in time order (stacks__finish) */
	for (k = 0; k < p->nraw; k++) {
		const struct profile_sample *r = p->raw[k];
		__u32 phase = r->phase & (MP_MAX_PHASES - 1);

		if (!r->n)
			continue;	/* no address: nothing perf could show */

		/* the thread's comm is its phase: rename it when the phase changes */
		for (j = 0; j < ntp && tp[j].tid != r->tid; j++)
			;
		if (j == ntp || tp[j].phase != phase) {
			if (j == ntp) {
				tp[ntp].tid = r->tid;
				ntp++;
			}
			tp[j].phase = phase;
			err = perfdata__comm(pd, r->pid, r->tid, r->ts_ns ? r->ts_ns - 1 : 0,
					     phase_name(m, phase), false);
			if (err)
				goto cleanup;
		}
		/* return addresses point after the call: perf expects them as they are */
		err = perfdata__sample(pd, event_of[phase], r->pid, r->tid, r->cpu, r->ts_ns,
				       r->weight, r->ips, r->n);
		if (err)
			goto cleanup;
	}
	err = perfdata__close(pd);
cleanup:
	free(tp);
	perfdata__free(pd);
	return err;
}

const struct output_format perf_format = {
	.name = "perf-data",
	.help = "Write a perf.data file (perf script/report -i FILE); the sample comm is the "
		"phase",
	.needs = OUTPUT_NEEDS_STACKS | OUTPUT_NEEDS_RAW | OUTPUT_NEEDS_SEEK,
	.write = perf_write,
};
