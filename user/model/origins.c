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

void origins__free(struct origins *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		free(o->v[i].frames);
	free(o->v);
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

int origins__add(struct origins *o, struct profile *p, const struct causerules *r,
		 const struct origin *in, const char *const *frames, __u32 n)
{
	struct origin *e;
	const char *label;
	char buf[512];
	__u32 i;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		struct origin *v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	e = &o->v[o->n];
	*e = *in;
	e->path = NULL;
	e->frames = calloc(n ? n : 1, sizeof(*e->frames));
	if (!e->frames)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		e->frames[i] = profile__intern(p, frames[i]);
		if (!e->frames[i])
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
	o->n++;
	return 0;
nomem:
	free(e->frames);
	return -ENOMEM;
}

__u32 origins__find(const struct origins *o, __u32 pid, __u32 kind, __u64 addr)
{
	size_t i;

	for (i = o->n; i > 0; i--) {
		const struct origin *e = &o->v[i - 1];

		if (e->pid != pid)
			continue;
		if (kind == MP_MAP_HEAP) {
			if (e->how == MP_ORIGIN_BRK)
				return i;
			continue;
		}
		if (addr >= e->start && addr - e->start < e->len)
			return i;
	}
	return 0;
}
