// SPDX-License-Identifier: GPL-2.0
/* The stack views' lines, in the order they are shown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "report/stacklines.h"

static const char *phase_name(const struct model *m, unsigned int id)
{
	return id < MP_MAX_PHASES && m->names[id][0] ? m->names[id] : "[unknown]";
}

static int cmp_frames(const struct profile_stack *a, const struct profile_stack *b)
{
	__u32 i;
	int c;

	c = strcmp(a->comm, b->comm);
	for (i = 0; !c && i < a->nframes && i < b->nframes; i++)
		c = strcmp(a->frames[i], b->frames[i]);
	if (c)
		return c;
	return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
}

static int cmp_stack(const void *x, const void *y)
{
	return cmp_frames(*(const struct profile_stack *const *)x,
			  *(const struct profile_stack *const *)y);
}

/* appends one line: [phase, comm, frames...] */
static void line_add(struct stacklines *sl, const char ***fp, const char *phase,
		     const char *comm, const char *const *frames, __u32 n, __u64 bytes)
{
	const char **f = *fp;
	__u32 i;

	f[0] = phase;
	f[1] = comm;
	for (i = 0; i < n; i++)
		f[2 + i] = frames[i];
	sl->v[sl->n].framev = f;
	sl->v[sl->n].nframes = n + 2;
	sl->v[sl->n++].weight = bytes;
	*fp = f + n + 2;
}

int stacklines__build(struct stacklines *sl, const struct model *m)
{
	const struct profile *p = &m->profile;
	const struct model_proc *main_proc = model__main((struct model *)m);
	const struct profile_stack **sorted = NULL;
	static const char *const not_sampled[] = { "[not sampled]" };
	char raw_comm[MP_COMM_LEN + 1] = "";
	size_t nframes = 0, k;
	bool entered[MP_MAX_PHASES] = {};
	const char **fp;
	unsigned int i;

	memset(sl, 0, sizeof(*sl));
	for (k = 0; k < p->nstacks; k++)
		nframes += p->stacks[k].nframes + 2;
	nframes += 3 * m->norder;
	sl->v = calloc(p->nstacks + m->norder + 1, sizeof(*sl->v));
	sl->framev = calloc(nframes + 1, sizeof(*sl->framev));
	sorted = calloc(p->nstacks + 1, sizeof(*sorted));
	if (main_proc)
		memcpy(raw_comm, main_proc->comm, MP_COMM_LEN);
	sl->comm = utf8__sanitize(raw_comm[0] ? raw_comm : "[unknown]");
	if (!sl->v || !sl->framev || !sorted || !sl->comm) {
		free(sorted);
		stacklines__free(sl);
		return -ENOMEM;
	}
	for (k = 0; k < p->nstacks; k++)
		sorted[k] = &p->stacks[k];
	qsort(sorted, p->nstacks, sizeof(*sorted), cmp_stack);
	fp = sl->framev;
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];
		__u64 rest = model__unsampled(m, id);

		entered[id] = true;
		/* a stack whose samples a relabel moved to another phase is left empty */
		for (k = 0; k < p->nstacks; k++)
			if (sorted[k]->phase == id && sorted[k]->samples)
				line_add(sl, &fp, phase_name(m, id), sorted[k]->comm,
					 sorted[k]->frames, sorted[k]->nframes, sorted[k]->bytes);
		if (rest)
			line_add(sl, &fp, phase_name(m, id), sl->comm, not_sampled, 1, rest);
	}
	for (k = 0; k < p->nstacks; k++)
		if (sorted[k]->samples &&
		    (sorted[k]->phase >= MP_MAX_PHASES || !entered[sorted[k]->phase]))
			line_add(sl, &fp, phase_name(m, sorted[k]->phase), sorted[k]->comm,
				 sorted[k]->frames, sorted[k]->nframes, sorted[k]->bytes);
	free(sorted);
	return 0;
}

void stacklines__free(struct stacklines *sl)
{
	free(sl->v);
	free(sl->framev);
	free(sl->comm);
	memset(sl, 0, sizeof(*sl));
}
