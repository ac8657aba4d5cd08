// SPDX-License-Identifier: GPL-2.0
/* Mapping origins: who created each mapping, and its label. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/origins.h"

void origins__init(struct origins *o)
{
	memset(o, 0, sizeof(*o));
}

size_t origins__recorded(const struct origins *o)
{
	size_t i, n = 0;

	for (i = 0; i < o->n; i++)
		n += origins__counted(o, &o->v[i]);
	return n;
}

void origins__free(struct origins *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		free(o->v[i].frames);
	free(o->v);
	free(o->by_addr);
	origins__init(o);
}

const char *origins__label_of(const struct causerules *r, const char *const *frames, __u32 n)
{
	__u32 i;

	for (i = n; i > 0; i--) {
		const char *f = frames[i - 1];

		if (!r || !causerules__is_allocator(r, f))
			return f;
	}
	return NULL;
}

/*
 * glibc's new_heap(): mmap(HEAP_MAX_SIZE or twice that, PROT_NONE, MAP_NORESERVE), then
 * trimmed to an aligned HEAP_MAX_SIZE and grown by mprotect. Nothing else in a process
 * reserves exactly that with no access (thread stacks are bigger and readable).
 */
static bool is_arena(const struct origin *in)
{
	return in->how == MP_ORIGIN_MMAP && in->prot == 0 &&
	       (in->len == ORIGIN_ARENA_BYTES || in->len == 2 * ORIGIN_ARENA_BYTES);
}

/*
 * A label reads as the function's name: "ns::f(int, char const*) const" becomes "ns::f".
 * The parameter list is the first '(' outside template brackets that is not part of
 * "operator()"; names without one are kept.
 */
static void strip_params(char *s)
{
	int depth = 0;
	char *c;

	for (c = s; *c; c++) {
		if (*c == '<')
			depth++;
		else if (*c == '>' && depth > 0)
			depth--;
		else if (*c == '(' && !depth && c > s) {
			if (c - s >= 8 && !strncmp(c - 8, "operator", 8))
				continue;
			*c = '\0';
			return;
		}
	}
}

/* Could two origins be of one kind of mapping (one of them not known: yes)? */
static bool backing_same(__u32 a, __u32 b)
{
	return a == b || a == MP_BACKING_UNKNOWN || b == MP_BACKING_UNKNOWN;
}

/* What backs a mapping of kind (enum mp_map_kind): unknown where both can (shmem, heap). */
static __u32 kind_backing(__u32 kind)
{
	switch (kind) {
	case MP_MAP_FILE:
	case MP_MAP_DEVICE:
		return MP_BACKING_FILE;
	case MP_MAP_ANON:
	case MP_MAP_STACK:
	case MP_MAP_THREAD_STACK:
		return MP_BACKING_ANON;
	}
	return MP_BACKING_UNKNOWN;
}

/* The first position in by_addr whose (pid, start) is not below (pid, start). */
static size_t lower_bound(const struct origins *o, __u32 pid, __u64 start)
{
	size_t lo = 0, hi = o->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct origin *e = &o->v[o->by_addr[mid]];

		if (e->pid < pid || (e->pid == pid && e->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int origins__add(struct origins *o, struct profile *p, const struct causerules *r,
		 const struct origin *in, const char *const *frames, __u32 n)
{
	struct origin *e;
	const char *label;
	char buf[512];
	__u32 i;

	const char **fv;
	size_t at, slot;
	bool same;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		struct origin *v = realloc(o->v, cap * sizeof(*v));
		__u32 *ix = realloc(o->by_addr, cap * sizeof(*ix));

		if (v)
			o->v = v;
		if (ix)
			o->by_addr = ix;
		if (!v || !ix)
			return -ENOMEM;
		o->cap = cap;
	}
	fv = calloc(n ? n : 1, sizeof(*fv));
	if (!fv)
		return -ENOMEM;
	at = lower_bound(o, in->pid, in->start);
	same = at < o->n && o->v[o->by_addr[at]].pid == in->pid &&
	       o->v[o->by_addr[at]].start == in->start &&
	       backing_same(o->v[o->by_addr[at]].backing, in->backing);
	slot = same ? o->by_addr[at] : o->n;
	e = &o->v[slot];
	if (same) {
		free(e->frames);
		o->reused++;
	}
	*e = *in;
	e->path = NULL;
	e->grown = 0;
	e->frames = fv;
	for (i = 0; i < n; i++) {
		fv[i] = profile__intern(p, frames[i]);
		if (!fv[i])
			goto nomem;
	}
	e->nframes = n;
	e->arena = is_arena(in);
	if (e->arena) {
		snprintf(buf, sizeof(buf), "glibc arena of thread %u (%s)", in->tid, in->comm);
		label = buf;
		/* one arena a thread: a retry at another alignment or a further heap of the
		 * same arena is not another one */
		for (i = 0; i < o->n; i++)
			if (o->v[i].arena && o->v[i].pid == in->pid && o->v[i].tid == in->tid)
				break;
		if (i == o->n)
			o->arenas++;
	} else {
		label = origins__label_of(r, e->frames, n);
		snprintf(buf, sizeof(buf), "%s", label ? label : "[no frame]");
		strip_params(buf);
		label = buf;
	}
	e->label = profile__intern(p, label);
	if (!e->label)
		goto nomem;
	e->seq = ++o->seq;
	if (e->len > o->maxlen)
		o->maxlen = e->len;
	if (!same) {
		memmove(&o->by_addr[at + 1], &o->by_addr[at], (o->n - at) * sizeof(*o->by_addr));
		o->by_addr[at] = slot;
		o->n++;
	}
	return 0;
nomem:
	if (!same) {
		free(fv);	/* the slot was never counted */
		return -ENOMEM;
	}
	/* the replaced origin is gone: its slot stays valid, without frames */
	e->nframes = 0;
	e->label = "[no frame]";
	e->seq = ++o->seq;
	return -ENOMEM;
}

__u32 origins__find(const struct origins *o, __u32 pid, __u32 kind, __u64 addr)
{
	__u64 best_seq = 0;
	__u32 best = 0;
	size_t i;

	if (kind == MP_MAP_HEAP) {
		for (i = o->n; i > 0; i--)
			if (o->v[i - 1].pid == pid && o->v[i - 1].how == MP_ORIGIN_BRK)
				return i;
		return 0;
	}
	/* the origins of pid starting at or below addr, nearest first, within maxlen */
	for (i = lower_bound(o, pid, addr + 1); i > 0; i--) {
		const struct origin *e = &o->v[o->by_addr[i - 1]];

		if (e->pid != pid || addr - e->start >= o->maxlen)
			break;
		/* of another backing: made over a part of the mapping that was unmapped */
		if (!backing_same(e->backing, kind_backing(kind)))
			continue;
		if (addr - e->start < e->len && e->seq > best_seq) {
			best_seq = e->seq;
			best = o->by_addr[i - 1] + 1;
		}
	}
	return best;
}

static int by_thread_cmp(const void *x, const void *y, void *arg)
{
	const struct origin *v = arg, *a = &v[*(const __u32 *)x], *b = &v[*(const __u32 *)y];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int origins__by_thread(const struct origins *o, __u32 **idx)
{
	size_t i;

	*idx = calloc(o->n + 1, sizeof(**idx));
	if (!*idx)
		return -ENOMEM;
	for (i = 0; i < o->n; i++)
		(*idx)[i] = i;
	qsort_r(*idx, o->n, sizeof(**idx), by_thread_cmp, o->v);
	return 0;
}

/* the first entry of byt of (pid, tid) made at or after ts_ns, o->n if none */
static size_t thread_next(const struct origins *o, const __u32 *byt, __u32 pid, __u32 tid,
			  __u64 ts_ns)
{
	size_t lo = 0, hi = o->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct origin *e = &o->v[byt[mid]];

		if (e->pid < pid ||
		    (e->pid == pid && (e->tid < tid || (e->tid == tid && e->ts_ns < ts_ns))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

__u32 origins__of_sample(const struct origins *o, const __u32 *byt, const struct profile *p,
			 const struct profile_sample *r)
{
	const struct profile_stack *st;
	const struct origin *e;
	size_t at;

	if (r->origin || !byt || r->stack >= p->nstacks)
		return r->origin;
	at = thread_next(o, byt, r->pid, r->tid, r->ts_ns);
	if (at == o->n)
		return 0;
	e = &o->v[byt[at]];
	st = &p->stacks[r->stack];
	/* frames are interned in the profile: equal names are equal pointers */
	if (e->pid != r->pid || e->tid != r->tid || e->nframes != st->nframes || !st->nframes ||
	    memcmp(e->frames, st->frames, st->nframes * sizeof(*st->frames)))
		return 0;
	return byt[at] + 1;
}
