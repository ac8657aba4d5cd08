// SPDX-License-Identifier: GPL-2.0
/* The unmatched growth by code path (see codepaths.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/causes.h"
#include "report/codepaths.h"

static void path_name(char *b, size_t len, const struct profile_stack *s)
{
	size_t used = 0;
	__u32 i, k;

	b[0] = '\0';
	for (k = 0; k < CODEPATHS_DEPTH && k < s->nframes; k++) {
		i = s->nframes - 1 - k;
		used += snprintf(b + used, used < len ? len - used : 0, "%s%s", k ? " <- " : "",
				 s->frames[i]);
		if (used >= len)
			break;
	}
	if (!s->nframes)
		snprintf(b, len, "[no frame]");
}

static int by_bytes(const void *a, const void *b)
{
	const struct codepath *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

int codepaths__build(struct codepaths *cp, const struct model *m)
{
	const struct profile *p = &m->profile;
	char name[CODEPATHS_NAME_MAX];
	struct strmap_entry *e;
	int err = -ENOMEM;
	size_t k, i;

	memset(cp, 0, sizeof(*cp));
	strmap__init(&cp->names, NULL);
	for (k = 0; k < p->nstacks; k++) {
		const struct profile_stack *s = &p->stacks[k];

		if (causes__match_stack(m, s, NULL) >= 0)
			continue;
		path_name(name, sizeof(name), s);
		e = strmap__get(&cp->names, name);
		if (!e)
			goto cleanup;
		e->value += s->bytes;
		cp->total += s->bytes;
	}
	cp->v = calloc(cp->names.len ? cp->names.len : 1, sizeof(*cp->v));
	if (!cp->v)
		goto cleanup;
	for (i = 0; i < cp->names.cap; i++) {
		e = &cp->names.slots[i];
		if (e->key)
			cp->v[cp->n++] = (struct codepath){ .name = e->key, .bytes = e->value };
	}
	qsort(cp->v, cp->n, sizeof(*cp->v), by_bytes);
	err = 0;
cleanup:
	if (err)
		codepaths__free(cp);
	return err;
}

void codepaths__free(struct codepaths *cp)
{
	free(cp->v);
	strmap__free(&cp->names);
	memset(cp, 0, sizeof(*cp));
}
