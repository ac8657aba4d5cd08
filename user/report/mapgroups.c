// SPDX-License-Identifier: GPL-2.0
/* The run's growth by mapping, like mappings together (see mapgroups.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/causes.h"
#include "report/mapgroups.h"

/* The class of origin id's mapping in the top lists, else by its path. */
static __u32 origin_class(const struct model *m, __u32 id, const struct origin *o)
{
	unsigned int i, k;

	for (i = 0; i < m->norder; i++)
		for (k = 0; k < m->ntop[m->order[i]]; k++)
			if (m->top[m->order[i]][k].origin == id)
				return m->top[m->order[i]][k].cls;
	return o->path && o->path[0] == '/' ? MP_FILE : MP_ANON;
}

/* The group of (name, by, cls), added when new; NULL when g is full or on ENOMEM. */
static struct mapgroup *group_of(struct mapgroups *g, size_t cap, const char *name,
				 const char *by, __u32 cls)
{
	char key[MAPGROUPS_NAME_MAX + MAPGROUPS_BY_MAX + 16];
	struct strmap_entry *k;
	struct mapgroup *e;

	snprintf(key, sizeof(key), "%u\x1f%s\x1f%s", cls, name, by);
	k = strmap__get(&g->index, key);
	if (!k)
		return NULL;
	if (k->value)
		return &g->v[k->value - 1];
	if (g->n == cap)
		return NULL;
	e = &g->v[g->n++];
	k->value = g->n;
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->by, sizeof(e->by), "%s", by);
	e->cls = cls;
	return e;
}

static int by_bytes(const void *a, const void *b)
{
	const struct mapgroup *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Every mapping with a known origin: its exact growth. */
static int add_origins(struct mapgroups *g, size_t cap, const struct model *m)
{
	const struct origin *best_arena = NULL;
	struct mapgroup *e, *arenas = NULL;
	char by[MAPGROUPS_BY_MAX];
	size_t i;

	for (i = 0; i < m->origins.n; i++) {
		const struct origin *o = &m->origins.v[i];
		const char *lab;

		if (!o->grown || !origins__counted(&m->origins, o))
			continue;
		lab = causes__label(m, (__u32)i + 1, 0, by, sizeof(by));
		if (o->arena) {
			e = arenas = arenas ? arenas :
				group_of(g, cap, "glibc malloc arenas", "", MP_ANON);
			if (e && (!best_arena || o->grown > best_arena->grown)) {
				best_arena = o;
				snprintf(e->by, sizeof(e->by), "%s", lab ? lab : "");
			}
		} else {
			e = group_of(g, cap, o->how == MP_ORIGIN_BRK ? "[heap]" :
				     o->path && strncmp(o->path, "[anon", 5) ? o->path : "[anon]",
				     lab ? lab : o->label, origin_class(m, (__u32)i + 1, o));
		}
		if (!e)
			return -ENOMEM;
		e->arena = o->arena;
		e->count++;
		e->bytes += o->grown;
	}
	return 0;
}

/* The top lists' mappings without an origin, what the lists hold of them. */
static int add_unnamed(struct mapgroups *g, size_t cap, const struct model *m)
{
	struct mapgroup *e;
	unsigned int i, k;

	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		for (k = 0; k < m->ntop[id]; k++) {
			const struct model_mapping *mm = &m->top[id][k];

			if (mm->origin)
				continue;
			e = group_of(g, cap, mm->kind == MP_MAP_ANON ? "[anon]" : mm->path, "",
				     mm->cls);
			if (!e)
				return -E2BIG;
			e->deleted = mm->deleted;
			e->bytes += mm->bytes;
		}
	}
	return 0;
}

int mapgroups__build(struct mapgroups *g, const struct model *m)
{
	size_t cap = m->origins.n + MP_MAX_PHASES * MODEL_TOP_MAPPINGS + 1;
	unsigned int i;
	int err;

	memset(g, 0, sizeof(*g));
	strmap__init(&g->index, NULL);
	g->v = calloc(cap, sizeof(*g->v));
	err = g->v ? add_origins(g, cap, m) : -ENOMEM;
	if (!err)
		err = add_unnamed(g, cap, m);
	/* the index points into v, which the sort reorders */
	strmap__free(&g->index);
	if (err) {
		mapgroups__free(g);
		return err;
	}
	for (i = 0; i < m->norder; i++)
		g->total += m->mapping_bytes[m->order[i]];
	qsort(g->v, g->n, sizeof(*g->v), by_bytes);
	return 0;
}

void mapgroups__free(struct mapgroups *g)
{
	free(g->v);
	strmap__free(&g->index);
	memset(g, 0, sizeof(*g));
}
