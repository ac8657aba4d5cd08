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
		for (j = 0; j < c->nparts; j++)
			free(c->parts[j].text);
		free(c->parts);
		free(c->ceiling.setting);
		free(c->ceiling.phase);
		free(c->ceiling.text);
		for (j = 0; j < c->ceiling.nfactors; j++)
			free(c->ceiling.factors[j]);
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

static int add_remedy(struct cause *c, const char *text, bool alt)
{
	size_t a = strlen(c->remedy), b = strlen(text);
	struct cause_remedy *v = realloc(c->parts, (c->nparts + 1) * sizeof(*v));
	char *s;

	if (!v)
		return -ENOMEM;
	c->parts = v;
	v[c->nparts].alt = alt;
	v[c->nparts].text = strdup(text);
	if (!v[c->nparts].text)
		return -ENOMEM;
	c->nparts++;
	if (alt)
		return 0;
	s = realloc(c->remedy, a + b + 2);
	if (!s)
		return -ENOMEM;
	c->remedy = s;
	if (a)
		s[a++] = ' ';
	memcpy(s + a, text, b + 1);
	return 0;
}

/*
 * "mappings", "setting NAME UNIT [units PHASE]", "units PHASE [x SETTING]...": 0, -EINVAL,
 * -ENOMEM.
 */
static int add_ceiling(struct cause *c, const char *val, char *why, size_t len)
{
	struct cause_ceiling *cl = &c->ceiling;
	char *copy = strdup(val), *save = NULL, *w[2 + 2 * CAUSE_MAX_FACTORS + 1];
	unsigned int n = 0, i;
	int ret = -EINVAL;

	if (!copy)
		return -ENOMEM;
	if (cl->kind) {
		snprintf(why, len, "a second 'ceiling' for the cause");
		goto out;
	}
	for (w[n] = strtok_r(copy, " \t", &save); w[n] && n + 1 < sizeof(w) / sizeof(w[0]);
	     w[++n] = strtok_r(NULL, " \t", &save))
		;
	if (n == 1 && !strcmp(w[0], "mappings")) {
		cl->kind = CEILING_MAPPINGS;
	} else if ((n == 3 || (n == 5 && !strcmp(w[3], "units"))) && !strcmp(w[0], "setting")) {
		cl->unit = !strcmp(w[2], "MiB") ? 1ULL << 20 : !strcmp(w[2], "KiB") ? 1ULL << 10 :
			   !strcmp(w[2], "bytes") ? 1 : 0;
		if (!cl->unit) {
			snprintf(why, len, "unit '%s' is not MiB, KiB or bytes", w[2]);
			goto out;
		}
		cl->kind = CEILING_SETTING;
		cl->setting = strdup(w[1]);
		cl->phase = n == 5 ? strdup(w[4]) : NULL;
		if (!cl->setting || (n == 5 && !cl->phase))
			goto nomem;
	} else if (n >= 2 && n % 2 == 0 && !strcmp(w[0], "units")) {
		cl->kind = CEILING_UNITS;
		cl->phase = strdup(w[1]);
		if (!cl->phase)
			goto nomem;
		for (i = 2; i < n; i += 2) {
			if (strcmp(w[i], "x") || cl->nfactors == CAUSE_MAX_FACTORS) {
				snprintf(why, len, "'units PHASE' takes 'x SETTING' factors, at most %d",
					 CAUSE_MAX_FACTORS);
				goto out;
			}
			cl->factors[cl->nfactors] = strdup(w[i + 1]);
			if (!cl->factors[cl->nfactors++])
				goto nomem;
		}
	} else {
		snprintf(why, len, "'ceiling' takes 'mappings', 'setting NAME UNIT [units PHASE]' or "
			 "'units PHASE [x SETTING]...'");
		goto out;
	}
	cl->text = malloc(strlen(val) + 9);
	if (!cl->text)
		goto nomem;
	sprintf(cl->text, "ceiling %s", val);
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
out:
	free(copy);
	return ret;
}

/* Does accepts() take every flag text names ("-x", "--xx-yy" after a space or bracket)? */
static bool part_ok(const char *text, bool (*accepts)(void *ctx, const char *flag), void *ctx)
{
	const char *p, *q;
	char flag[64];

	for (p = text; *p; p++) {
		if (*p != '-' || (p > text && !strchr(" (`,;/", p[-1])))
			continue;
		q = p + (p[1] == '-' ? 2 : 1);
		if (*q < 'a' || *q > 'z')
			continue;
		while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-')
			q++;
		while (q > p && q[-1] == '-')
			q--;
		if ((size_t)(q - p) >= sizeof(flag))
			continue;
		snprintf(flag, sizeof(flag), "%.*s", (int)(q - p), p);
		if (!accepts(ctx, flag))
			return false;
		p = q - 1;
	}
	return true;
}

const char *causerules__remedy(const struct cause *c, bool (*accepts)(void *ctx,
			       const char *flag), void *ctx, char *buf, size_t len)
{
	size_t i, j, n = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < c->nparts; i = j) {
		const struct cause_remedy *pick = NULL;

		/* the group: a part and the alternatives after it */
		for (j = i; j < c->nparts && (j == i || c->parts[j].alt); j++)
			if (!pick && (!accepts || part_ok(c->parts[j].text, accepts, ctx)))
				pick = &c->parts[j];
		if (pick && n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", pick->text);
	}
	return buf;
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
		} else if (!strcmp(key, "ceiling")) {
			char why[160] = "";

			if (!cur) {
				snprintf(err, errlen, "%s:%u: 'ceiling' before any 'cause' line", name,
					 lineno);
				ret = -EINVAL;
			} else {
				ret = add_ceiling(cur, val, why, sizeof(why));
				if (ret == -EINVAL)
					snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
			}
		} else if (!strcmp(key, "remedy") || !strcmp(key, "remedy-or")) {
			bool alt = key[6] == '-';

			if (cur && (!alt || cur->nparts)) {
				ret = add_remedy(cur, val, alt);
			} else {
				snprintf(err, errlen, "%s:%u: '%s' before any %s line", name, lineno,
					 key, alt && cur ? "'remedy'" : "'cause'");
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
