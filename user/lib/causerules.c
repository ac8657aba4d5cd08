// SPDX-License-Identifier: GPL-2.0
/* Cause rules: parsing data/causes.rules-style text and matching names against it. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/causerules.h"

static const char *const match_names[CAUSE_NR_MATCH] = { "frame", "origin", "mapping" };

void causerules__init(struct causerules *r)
{
	memset(r, 0, sizeof(*r));
}

void causerules__free(struct causerules *r)
{
	size_t i, j;

	for (i = 0; i < r->nallocators; i++)
		free(r->allocators[i]);
	free(r->allocators);
	for (i = 0; i < r->ncauses; i++) {
		struct cause *c = &r->causes[i];

		for (j = 0; j < c->nrules; j++) {
			free(c->rules[j].pattern);
			free(c->rules[j].text);
		}
		free(c->rules);
		free(c->preset);
		free(c->name);
		free(c->remedy);
	}
	free(r->causes);
	free(r->preset);
	causerules__init(r);
}

int causerules__add_allocator(struct causerules *r, const char *pattern)
{
	char **v = realloc(r->allocators, (r->nallocators + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->allocators = v;
	v[r->nallocators] = strdup(pattern);
	if (!v[r->nallocators])
		return -ENOMEM;
	r->nallocators++;
	return 0;
}

static int add_cause(struct causerules *r, const char *preset, const char *name)
{
	struct cause *v = realloc(r->causes, (r->ncauses + 1) * sizeof(*v));
	struct cause *c;

	if (!v)
		return -ENOMEM;
	r->causes = v;
	c = &v[r->ncauses];
	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	c->remedy = strdup("");
	c->preset = preset ? strdup(preset) : NULL;
	r->ncauses++;
	if (!c->name || !c->remedy || (preset && !c->preset))
		return -ENOMEM;
	return 0;
}

static int add_rule(struct cause *c, enum cause_match what, const char *pattern)
{
	struct cause_rule *v = realloc(c->rules, (c->nrules + 1) * sizeof(*v));
	size_t len = strlen(match_names[what]) + strlen(pattern) + 2;

	if (!v)
		return -ENOMEM;
	c->rules = v;
	v[c->nrules].what = what;
	v[c->nrules].pattern = strdup(pattern);
	v[c->nrules].text = malloc(len);
	c->nrules++;
	if (!v[c->nrules - 1].pattern || !v[c->nrules - 1].text)
		return -ENOMEM;
	snprintf(v[c->nrules - 1].text, len, "%s %s", match_names[what], pattern);
	return 0;
}

static int add_remedy(struct cause *c, const char *text)
{
	size_t a = strlen(c->remedy), b = strlen(text);
	char *s = realloc(c->remedy, a + b + 2);

	if (!s)
		return -ENOMEM;
	c->remedy = s;
	if (a)
		s[a++] = ' ';
	memcpy(s + a, text, b + 1);
	return 0;
}

/* One line, trimmed, without comment: its keyword and value; 0, 1 (blank) or -EINVAL. */
static int split(char *line, char **key, char **val)
{
	char *p = strchr(line, '#'), *end;

	if (p)
		*p = '\0';
	while (isspace((unsigned char)*line))
		line++;
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (!*line)
		return 1;
	*key = line;
	while (*line && !isspace((unsigned char)*line))
		line++;
	if (!*line)
		return -EINVAL;
	*line++ = '\0';
	while (isspace((unsigned char)*line))
		line++;
	*val = line;
	return 0;
}

int causerules__parse(struct causerules *r, const char *text, const char *name, char *err,
		      size_t errlen)
{
	char *copy = strdup(text), *line, *next, *key, *val, *preset = NULL;
	struct cause *cur = NULL;
	unsigned int lineno = 0;
	int ret = 0, i;

	if (!copy)
		return -ENOMEM;
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		ret = split(line, &key, &val);
		if (ret == 1) {
			ret = 0;
			continue;
		}
		if (ret) {
			snprintf(err, errlen, "%s:%u: '%s' needs a value", name, lineno, line);
			break;
		}
		if (!strcmp(key, "allocator")) {
			ret = causerules__add_allocator(r, val);
		} else if (!strcmp(key, "preset")) {
			free(preset);
			preset = strdup(val);
			cur = NULL;
			ret = preset ? 0 : -ENOMEM;
		} else if (!strcmp(key, "cause")) {
			ret = add_cause(r, preset, val);
			cur = ret ? NULL : &r->causes[r->ncauses - 1];
		} else if (!strcmp(key, "remedy")) {
			if (cur) {
				ret = add_remedy(cur, val);
			} else {
				snprintf(err, errlen, "%s:%u: 'remedy' before any 'cause' line",
					 name, lineno);
				ret = -EINVAL;
			}
		} else {
			for (i = 0; i < CAUSE_NR_MATCH && strcmp(key, match_names[i]); i++)
				;
			if (i == CAUSE_NR_MATCH) {
				snprintf(err, errlen, "%s:%u: unknown directive '%s'", name, lineno,
					 key);
				ret = -EINVAL;
			} else if (!cur) {
				snprintf(err, errlen, "%s:%u: '%s' before any 'cause' line", name,
					 lineno, key);
				ret = -EINVAL;
			} else {
				ret = add_rule(cur, i, val);
			}
		}
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	free(preset);
	free(copy);
	return ret;
}

int causerules__use_preset(struct causerules *r, const char *name)
{
	free(r->preset);
	r->preset = name ? strdup(name) : NULL;
	return name && !r->preset ? -ENOMEM : 0;
}

bool causerules__is_allocator(const struct causerules *r, const char *frame)
{
	size_t i;

	for (i = 0; i < r->nallocators; i++)
		if (!fnmatch(r->allocators[i], frame, 0))
			return true;
	return false;
}

bool causerules__in_use(const struct causerules *r, const struct cause *c)
{
	if (!c->preset)
		return true;
	return r->preset && !strcmp(r->preset, c->preset);
}

int causerules__match(const struct causerules *r, enum cause_match what, const char *s,
		      const struct cause_rule **rule)
{
	size_t i, j;

	/* the last cause first: a --causes file, read after the built-in rules, overrides them */
	for (i = r->ncauses; i-- > 0;) {
		const struct cause *c = &r->causes[i];

		if (!causerules__in_use(r, c))
			continue;
		for (j = 0; j < c->nrules; j++) {
			if (c->rules[j].what != what || fnmatch(c->rules[j].pattern, s, 0))
				continue;
			if (rule)
				*rule = &c->rules[j];
			return (int)i;
		}
	}
	return -1;
}
