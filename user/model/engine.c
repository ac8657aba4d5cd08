// SPDX-License-Identifier: GPL-2.0
/* The engine observed: its settings and its build's flags (see engine.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/engine.h"

void model_engine__free(struct model_engine *e)
{
	free(e->flags);
	free(e->deprecated);
	memset(e, 0, sizeof(*e));
}

int model_engine__copy(struct model_engine *dst, const struct model_engine *src)
{
	model_engine__free(dst);
	*dst = *src;
	dst->flags = src->flags ? strdup(src->flags) : NULL;
	dst->deprecated = src->deprecated ? strdup(src->deprecated) : NULL;
	if ((src->flags && !dst->flags) || (src->deprecated && !dst->deprecated)) {
		model_engine__free(dst);
		return -ENOMEM;
	}
	return 0;
}

const struct engine_setting *model_engine__get(const struct model_engine *e, const char *name)
{
	unsigned int i;

	for (i = 0; e && i < e->nsettings; i++)
		if (!strcmp(e->settings[i].name, name))
			return &e->settings[i];
	return NULL;
}

long long model_engine__int(const struct model_engine *e, const char *name, long long dflt)
{
	const struct engine_setting *s = model_engine__get(e, name);
	char *end;
	long long v;

	if (!s || !s->value[0])
		return dflt;
	if (!strcmp(s->value, "true") || !strcmp(s->value, "on"))
		return 1;
	if (!strcmp(s->value, "false") || !strcmp(s->value, "off"))
		return 0;
	v = strtoll(s->value, &end, 10);
	return *end ? dflt : v;
}

/* Is "\nflag\n" (or "\nflag=" with eq) in list? The entry's rest after '=' into buf. */
static bool listed(const char *list, const char *flag, bool eq, char *buf, size_t len)
{
	char want[ENGINE_FLAG_MAX + 3];
	size_t n = strlen(flag);
	const char *p;

	/* "\nFLAG\n" (or "\nFLAG="): one search of the list, not a compare per entry */
	if (!list || n >= ENGINE_FLAG_MAX)
		return false;
	want[0] = '\n';
	memcpy(want + 1, flag, n);
	want[1 + n] = eq ? '=' : '\n';
	want[2 + n] = '\0';
	p = strstr(list, want);
	if (!p)
		return false;
	if (buf && len) {
		const char *v = p + 2 + n, *e = strchr(v, '\n');

		snprintf(buf, len, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
	}
	return true;
}

bool model_engine__has(const struct model_engine *e, const char *flag)
{
	return !e || !e->flags || listed(e->flags, flag, false, NULL, 0);
}

const char *model_engine__replacement(const struct model_engine *e, const char *flag,
				      char *buf, size_t len)
{
	if (!e || !e->deprecated || !listed(e->deprecated, flag, true, buf, len))
		return NULL;
	return buf;
}

__u64 model_engine__slot_ctx(const struct model_engine *e, __u64 n_ctx)
{
	long long np;

	if (!e->known || !e->slots_setting[0])
		return n_ctx;
	np = model_engine__int(e, e->slots_setting, 1);
	if (np <= 1 || (e->shared_setting[0] && model_engine__int(e, e->shared_setting, 0) > 0))
		return n_ctx;
	return n_ctx / (__u64)np;
}

bool model_engine__accepts(const struct model_engine *e, const char *flag)
{
	char r[ENGINE_FLAG_MAX];

	if (!e || !e->flags)
		return true;
	return model_engine__has(e, flag) && !model_engine__replacement(e, flag, r, sizeof(r));
}

/* Appends "entry\n" to *list (started as "\n"). */
static int append(char **list, const char *entry)
{
	size_t n = *list ? strlen(*list) : 1, k = strlen(entry);
	char *p = realloc(*list, n + k + 2);

	if (!p)
		return -ENOMEM;
	if (!*list)
		strcpy(p, "\n");
	memcpy(p + n, entry, k);
	p[n + k] = '\n';
	p[n + k + 1] = '\0';
	*list = p;
	return 0;
}

int model_engine__add_flag(struct model_engine *e, const char *flag)
{
	int err;

	if (!flag[0] || strlen(flag) >= ENGINE_FLAG_MAX || strchr(flag, '\n'))
		return 0;
	if (e->flags && listed(e->flags, flag, false, NULL, 0))
		return 0;
	err = append(&e->flags, flag);
	if (!err)
		e->nflags++;
	return err;
}

int model_engine__add_deprecated(struct model_engine *e, const char *flag,
				 const char *replacement)
{
	char entry[2 * ENGINE_FLAG_MAX + 2];

	if (!flag[0] || strlen(flag) >= ENGINE_FLAG_MAX || strchr(flag, '\n') ||
	    (e->deprecated && listed(e->deprecated, flag, true, NULL, 0)))
		return 0;
	snprintf(entry, sizeof(entry), "%s=%s", flag, replacement ? replacement : "");
	if (strchr(entry + strlen(flag) + 1, '\n'))
		return 0;
	return append(&e->deprecated, entry);
}
