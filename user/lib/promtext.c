// SPDX-License-Identifier: GPL-2.0
/* Prometheus expositions read back and merged (see promtext.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/promtext.h"
#include "lib/util.h"

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* the length of the metric name at s (up to e), 0 when there is none */
static size_t name_len(const char *s, const char *e)
{
	size_t n = 0;

	while (s + n < e && name_char(s[n], !n))
		n++;
	return n;
}

static bool is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

static bool known_type(const char *s, size_t n)
{
	return is(s, n, "counter") || is(s, n, "gauge") || is(s, n, "histogram") ||
	       is(s, n, "summary") || is(s, n, "info") || is(s, n, "unknown");
}

/* a family's sample names: NAME, or NAME followed by a suffix (_total, _bucket, ...) */
static bool sample_of(const struct promtext_family *f, const char *s, const char *e)
{
	size_t n = name_len(s, e);

	return n >= f->name_len && !memcmp(s, f->name, f->name_len) &&
	       (n == f->name_len || s[f->name_len] == '_') && s + n < e &&
	       (s[n] == '{' || s[n] == ' ');
}

static struct promtext_family *family_of(struct promtext *p, const char *name, size_t n,
					  size_t *cap)
{
	struct promtext_family *f = p->nfams ? &p->fams[p->nfams - 1] : NULL;
	unsigned int i;

	if (f && f->name_len == n && !memcmp(f->name, name, n)) {
		/* metadata after its samples: not one family's lines together */
		return f->samples ? NULL : f;
	}
	for (i = 0; i < p->nfams; i++)
		if (p->fams[i].name_len == n && !memcmp(p->fams[i].name, name, n))
			return NULL;	/* the family twice */
	if (util__grow((void **)&p->fams, cap, p->nfams, sizeof(*p->fams)))
		return NULL;
	f = &p->fams[p->nfams++];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->name_len = n;
	return f;
}

/* "# HELP NAME text", "# TYPE NAME type", "# UNIT NAME unit": 0 or -EBADMSG */
static int meta(struct promtext *p, const char *s, const char *e, size_t *cap)
{
	const char *kw = s + 2, *name = s + 7, *rest;
	struct promtext_family *f;
	size_t n;

	if (e - s < 8 || s[1] != ' ' || kw[4] != ' ')
		return -EBADMSG;
	n = name_len(name, e);
	if (!n)
		return -EBADMSG;
	rest = name + n;
	if (rest < e && *rest != ' ')
		return -EBADMSG;
	if (rest < e)
		rest++;
	f = family_of(p, name, n, cap);
	if (!f)
		return -EBADMSG;
	if (!memcmp(kw, "HELP", 4)) {
		f->help = rest;
		f->help_len = e - rest;
		return 0;
	}
	if (!memcmp(kw, "UNIT", 4)) {
		if (f->unit)
			return -EBADMSG;
		f->unit = rest;
		f->unit_len = e - rest;
		return 0;
	}
	if (memcmp(kw, "TYPE", 4) || f->type || !known_type(rest, e - rest))
		return -EBADMSG;
	f->type = rest;
	f->type_len = e - rest;
	return 0;
}

int promtext__parse(struct promtext *p, char *text, size_t len)
{
	const char *s = text, *end = text + len, *e;
	struct promtext_family *f;
	unsigned int i;
	size_t cap = 0;
	bool eof = false;
	int err = 0;

	memset(p, 0, sizeof(*p));
	while (s < end && !err) {
		e = memchr(s, '\n', end - s);
		if (!e || eof) {
			err = -EBADMSG;	/* a last line cut short, or lines after # EOF */
			break;
		}
		if (e - s == 5 && !memcmp(s, "# EOF", 5)) {
			eof = true;
		} else if (s[0] == '#') {
			err = meta(p, s, e, &cap);
		} else {
			f = p->nfams ? &p->fams[p->nfams - 1] : NULL;
			if (!f || !sample_of(f, s, e)) {
				err = -EBADMSG;
				break;
			}
			if (!f->samples)
				f->samples = s;
			f->samples_len = e + 1 - f->samples;
		}
		s = e + 1;
	}
	for (i = 0; !err && i < p->nfams; i++)
		if (!p->fams[i].type)
			err = -EBADMSG;
	if (!err && !eof)
		err = -EBADMSG;
	if (err) {
		free(p->fams);
		memset(p, 0, sizeof(*p));
		return err;
	}
	p->text = text;
	p->len = len;
	return 0;
}

void promtext__free(struct promtext *p)
{
	if (!p)
		return;
	free(p->text);
	free(p->fams);
	memset(p, 0, sizeof(*p));
}

static bool same_name(const struct promtext_family *a, const struct promtext_family *b)
{
	return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len);
}

static bool same_type(const struct promtext_family *a, const struct promtext_family *b)
{
	return a->type_len == b->type_len && !memcmp(a->type, b->type, a->type_len);
}

/* The family named like u in p, or NULL; *hint: where to look first (texts in step). */
static const struct promtext_family *find(const struct promtext *p,
					  const struct promtext_family *u, unsigned int *hint)
{
	unsigned int i;

	if (*hint < p->nfams && same_name(&p->fams[*hint], u))
		return &p->fams[(*hint)++];
	for (i = 0; i < p->nfams; i++)
		if (same_name(&p->fams[i], u)) {
			*hint = i + 1;
			return &p->fams[i];
		}
	return NULL;
}

static void header(FILE *f, const struct promtext_family *u, bool om)
{
	const char *sfx = "", *type = NULL;

	if (!om && is(u->type, u->type_len, "counter"))
		sfx = "_total";
	if (!om && is(u->type, u->type_len, "info"))
		sfx = "_info", type = "gauge";
	if (!om && is(u->type, u->type_len, "unknown"))
		type = "untyped";
	/* a counter named NAME_total in OpenMetrics is NAME_total in 0.0.4 as well */
	if (*sfx && u->name_len > strlen(sfx) &&
	    !memcmp(u->name + u->name_len - strlen(sfx), sfx, strlen(sfx)))
		sfx = "";
	if (u->help_len)
		fprintf(f, "# HELP %.*s%s %.*s\n", (int)u->name_len, u->name, sfx,
			(int)u->help_len, u->help);
	fprintf(f, "# TYPE %.*s%s %.*s\n", (int)u->name_len, u->name, sfx,
		type ? (int)strlen(type) : (int)u->type_len, type ? type : u->type);
	if (om && u->unit_len)
		fprintf(f, "# UNIT %.*s %.*s\n", (int)u->name_len, u->name, (int)u->unit_len,
			u->unit);
}

/* A family's sample lines, each with label first in its label set. */
static void samples_out(FILE *f, const struct promtext_family *x, const char *label)
{
	const char *s = x->samples, *end = x->samples + x->samples_len, *e, *rest;
	size_t n;

	if (!label) {
		fwrite(x->samples, 1, x->samples_len, f);
		return;
	}
	for (; s < end; s = e + 1) {
		e = memchr(s, '\n', end - s);
		n = name_len(s, e);
		fwrite(s, 1, n, f);
		/* parsed: the name is followed by its labels or by the space before the value */
		if (s[n] == '{') {
			fprintf(f, "{%s%s", label, s[n + 1] == '}' ? "" : ",");
			rest = s + n + 1;
		} else {
			fprintf(f, "{%s}", label);
			rest = s + n;
		}
		fwrite(rest, 1, e + 1 - rest, f);
	}
}

int promtext__merge(FILE *f, const struct promtext *const *v, unsigned int n,
		    bool openmetrics, const char *label)
{
	const struct promtext_family **uniq;
	unsigned int i, k, j, nu = 0, total = 0, *hint;

	for (k = 0; k < n; k++)
		total += v[k]->nfams;
	uniq = calloc(total ? total : 1, sizeof(*uniq));
	hint = calloc(n ? n : 1, sizeof(*hint));
	if (!uniq || !hint) {
		free(uniq);
		free(hint);
		return -ENOMEM;
	}
	/* the families in the order they first appear */
	for (k = 0; k < n; k++)
		for (i = 0; i < v[k]->nfams; i++) {
			for (j = 0; j < nu && !same_name(uniq[j], &v[k]->fams[i]); j++)
				;
			if (j == nu)
				uniq[nu++] = &v[k]->fams[i];
		}
	for (j = 0; j < nu; j++) {
		header(f, uniq[j], openmetrics);
		for (k = 0; k < n; k++) {
			const struct promtext_family *x = find(v[k], uniq[j], &hint[k]);

			if (x && same_type(x, uniq[j]) && x->samples_len)
				samples_out(f, x, label);
		}
	}
	if (openmetrics)
		fputs("# EOF\n", f);
	free(uniq);
	free(hint);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
