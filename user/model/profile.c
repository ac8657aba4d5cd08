// SPDX-License-Identifier: GPL-2.0
/* The stack profile: interned frames, merged stacks, raw samples. Pure code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/util.h"
#include "model/profile.h"

void profile__init(struct profile *p, bool keep_raw)
{
	memset(p, 0, sizeof(*p));
	p->keep_raw = keep_raw;
	strmap__init(&p->strings, NULL);
	strmap__init(&p->index, NULL);
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->stacks);
	for (i = 0; i < p->nraw; i++)
		free(p->raw[i]);
	free(p->raw);
	free(p->when);
	free(p->maps);
	free(p->procs);
	strmap__free(&p->index);
	strmap__free(&p->strings);
	memset(p, 0, sizeof(*p));
}

const char *profile__intern(struct profile *p, const char *s)
{
	struct strmap_entry *e = strmap__get(&p->strings, s ? s : "");

	/* the map owns the key, and its address stays when the map grows */
	return e ? e->key : NULL;
}

/*
 * The merge key: the phase, then the interned pointers of comm and frames. Interned
 * strings are unique, so equal pointers mean equal names.
 */
static char *merge_key(__u32 phase, const char *comm, const char *const *frames, __u32 n)
{
	size_t len = 16 + (n + 1) * 17, o;
	char *k = malloc(len);
	__u32 i;

	if (!k)
		return NULL;
	o = snprintf(k, len, "%x/%lx", phase, (unsigned long)comm);
	for (i = 0; i < n; i++)
		o += snprintf(k + o, len - o, "/%lx", (unsigned long)frames[i]);
	return k;
}

int profile__add(struct profile *p, __u32 phase, const char *comm, const char *const *frames,
		 __u32 n, __u64 weight)
{
	return profile__add_from(p, phase, comm, frames, n, weight, 0);
}

int profile__add_from(struct profile *p, __u32 phase, const char *comm,
		      const char *const *frames, __u32 n, __u64 weight, __u32 origin)
{
	const char **fv = NULL, *c;
	struct profile_stack *ps;
	struct strmap_entry *e;
	char *key = NULL;
	int err = -ENOMEM;
	__u32 i;

	c = profile__intern(p, comm);
	fv = calloc(n ? n : 1, sizeof(*fv));
	if (!c || !fv)
		goto cleanup;
	for (i = 0; i < n; i++) {
		fv[i] = profile__intern(p, frames[i]);
		if (!fv[i])
			goto cleanup;
	}
	key = merge_key(phase, c, fv, n);
	e = key ? strmap__get(&p->index, key) : NULL;
	if (!e)
		goto cleanup;
	if (!e->value) {
		if (util__grow((void **)&p->stacks, &p->capstacks, p->nstacks, sizeof(*p->stacks)))
			goto cleanup;
		ps = &p->stacks[p->nstacks++];
		*ps = (struct profile_stack){ .phase = phase, .comm = c, .frames = fv,
					      .nframes = n };
		fv = NULL;
		e->value = p->nstacks;
	}
	p->last = e->value - 1;
	p->last_origin = origin;
	ps = &p->stacks[e->value - 1];
	if (!ps->origin)
		ps->origin = origin;
	ps->bytes += weight;
	ps->samples++;
	p->total++;
	err = 0;
cleanup:
	free(key);
	free(fv);
	return err;
}

/* The index of the stack (phase, comm, frames of stack i), made if new; -1 on ENOMEM. */
static long twin(struct profile *p, size_t i, __u32 phase)
{
	struct profile_stack *ps = &p->stacks[i], *n;
	const char **fv = NULL;
	struct strmap_entry *e;
	char *key;
	long ret = -1;

	key = merge_key(phase, ps->comm, ps->frames, ps->nframes);
	e = key ? strmap__get(&p->index, key) : NULL;
	if (!e)
		goto cleanup;
	if (!e->value) {
		fv = calloc(ps->nframes ? ps->nframes : 1, sizeof(*fv));
		if (!fv || util__grow((void **)&p->stacks, &p->capstacks, p->nstacks,
				sizeof(*p->stacks)))
			goto cleanup;
		ps = &p->stacks[i];
		memcpy(fv, ps->frames, ps->nframes * sizeof(*fv));
		n = &p->stacks[p->nstacks++];
		*n = (struct profile_stack){ .phase = phase, .comm = ps->comm, .frames = fv,
					     .nframes = ps->nframes, .origin = ps->origin };
		fv = NULL;
		e->value = p->nstacks;
	}
	ret = (long)e->value - 1;
cleanup:
	free(fv);
	free(key);
	return ret;
}

void profile__relabel(struct profile *p, __u32 pid, __u64 from_ns, __u64 to_ns,
		      const __u8 to[MP_MAX_PHASES], __s64 dbytes[MP_MAX_PHASES],
		      __s64 dsamples[MP_MAX_PHASES])
{
	struct profile_stack *old;
	size_t i;
	long j;

	for (i = 0; i < p->nwhen; i++) {
		struct profile_when *w = &p->when[i];
		__u32 ph;

		if (w->pid != pid || w->ts_ns < from_ns || w->ts_ns > to_ns ||
		    w->stack >= p->nstacks)
			continue;
		ph = p->stacks[w->stack].phase;
		if (ph >= MP_MAX_PHASES || !to[ph])
			continue;
		j = twin(p, w->stack, to[ph] - 1);
		if (j < 0)
			return;
		old = &p->stacks[w->stack];
		old->bytes -= old->bytes > w->weight ? w->weight : old->bytes;
		old->samples -= old->samples ? 1 : 0;
		p->stacks[j].bytes += w->weight;
		p->stacks[j].samples++;
		dbytes[ph] -= w->weight;
		dsamples[ph]--;
		dbytes[to[ph] - 1] += w->weight;
		dsamples[to[ph] - 1]++;
		w->stack = j;
	}
	for (i = 0; i < p->nraw; i++) {
		struct profile_sample *r = p->raw[i];

		if (r->pid == pid && r->ts_ns >= from_ns && r->ts_ns <= to_ns &&
		    r->phase < MP_MAX_PHASES && to[r->phase])
			r->phase = to[r->phase] - 1;
	}
}

int profile__add_raw(struct profile *p, __u32 pid, __u32 tid, __u32 cpu, __u32 phase,
		     __u64 ts_ns, __u64 weight, __u32 cls, __u32 origin, const __u64 *ips,
		     __u32 n)
{
	struct profile_sample *r;

	if (!p->keep_raw)
		return 0;
	if (util__grow((void **)&p->raw, &p->capraw, p->nraw, sizeof(*p->raw)))
		return -ENOMEM;
	r = malloc(sizeof(*r) + n * sizeof(__u64));
	if (!r)
		return -ENOMEM;
	*r = (struct profile_sample){ .pid = pid, .tid = tid, .phase = phase, .n = n,
				      .ts_ns = ts_ns, .weight = weight,
				      .stack = (__u32)p->last, .cls = cls, .origin = origin,
				      .cpu = cpu };
	memcpy(r->ips, ips, n * sizeof(__u64));
	p->raw[p->nraw++] = r;
	return 0;
}

int profile__add_proc(struct profile *p, __u32 pid, const char *comm)
{
	struct profile_proc *pp;
	size_t i;

	for (i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return 0;
	if (util__grow((void **)&p->procs, &p->capprocs, p->nprocs, sizeof(*p->procs)))
		return -ENOMEM;
	pp = &p->procs[p->nprocs++];
	pp->pid = pid;
	snprintf(pp->comm, sizeof(pp->comm), "%s", comm ? comm : "");
	return 0;
}

int profile__add_map(struct profile *p, __u32 pid, __u64 start, __u64 end, __u64 pgoff,
		     const char *path, const unsigned char *build_id, int build_id_len)
{
	struct profile_map *pm;
	const char *ip;

	if (!p->keep_raw)
		return 0;
	ip = profile__intern(p, path);
	if (!ip || util__grow((void **)&p->maps, &p->capmaps, p->nmaps, sizeof(*p->maps)))
		return -ENOMEM;
	pm = &p->maps[p->nmaps++];
	*pm = (struct profile_map){ .pid = pid, .start = start, .end = end, .pgoff = pgoff,
				    .path = ip };
	if (build_id && build_id_len > 0) {
		pm->build_id_len = build_id_len < 20 ? build_id_len : 20;
		memcpy(pm->build_id, build_id, pm->build_id_len);
	}
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct profile_sample *x = *(struct profile_sample *const *)a;
	const struct profile_sample *y = *(struct profile_sample *const *)b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void profile__sort_raw(struct profile *p)
{
	/* none (a recording without raw samples): no array to sort */
	if (p->nraw)
		qsort(p->raw, p->nraw, sizeof(*p->raw), cmp_raw);
}

int profile__add_when(struct profile *p, __u32 pid, __u32 tid, __u64 ts_ns, __u64 weight)
{
	if (!p->nstacks)
		return -EINVAL;
	if (p->nwhen >= PROFILE_MAX_WHEN) {
		p->when_dropped++;
		return 0;
	}
	if (util__grow((void **)&p->when, &p->capwhen, p->nwhen, sizeof(*p->when)))
		return -ENOMEM;
	p->when[p->nwhen++] = (struct profile_when){ .ts_ns = ts_ns, .weight = weight,
						     .stack = p->last, .pid = pid,
						     .origin = p->last_origin, .tid = tid };
	return 0;
}
