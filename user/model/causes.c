// SPDX-License-Identifier: GPL-2.0
/* What grew: sampled stacks to named causes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/causes.h"

static int match_origin(const struct model *m, const struct origin *o,
			const struct cause_rule **rule)
{
	const struct causerules *r = &m->rules;
	int c;
	__u32 i;

	for (i = o->nframes; i > 0; i--) {
		c = causerules__match(r, CAUSE_ORIGIN, o->frames[i - 1], rule);
		if (c >= 0)
			return c;
	}
	c = causerules__match(r, CAUSE_ORIGIN, o->label, rule);
	if (c >= 0 || !o->path)
		return c;
	return causerules__match(r, CAUSE_MAPPING, o->path, rule);
}

int causes__match_stack(const struct model *m, const struct profile_stack *s,
			const struct cause_rule **rule)
{
	const struct origin *o;
	int c;
	__u32 i;

	for (i = s->nframes; i > 0; i--) {
		c = causerules__match(&m->rules, CAUSE_FRAME, s->frames[i - 1], rule);
		if (c >= 0)
			return c;
	}
	o = origins__at(&m->origins, s->origin);
	return o ? match_origin(m, o, rule) : -1;
}

/* bytes per (cause, rule): the rule reported is the one with the most */
struct tally {
	const struct cause_rule *rule;
	int cause;
	__u64 bytes;
};

static int by_bytes(const void *a, const void *b)
{
	const struct cause_bytes *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

int causes__attribute(const struct model *m, causes_keep_fn keep, void *ctx,
		      struct cause_report *out)
{
	const struct profile *p = &m->profile;
	size_t ncauses = m->rules.ncauses, ntally = 0, k, j;
	const struct cause_rule *rule;
	struct tally *t = NULL;
	int c, err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->v = calloc(ncauses ? ncauses : 1, sizeof(*out->v));
	t = calloc(p->nstacks ? p->nstacks : 1, sizeof(*t));
	if (!out->v || !t)
		goto cleanup;
	for (k = 0; k < p->nstacks; k++) {
		const struct profile_stack *s = &p->stacks[k];

		if (keep && !keep(ctx, s))
			continue;
		out->total += s->bytes;
		rule = NULL;
		c = causes__match_stack(m, s, &rule);
		if (c < 0) {
			out->unmatched += s->bytes;
			continue;
		}
		out->v[c].cause = &m->rules.causes[c];
		out->v[c].bytes += s->bytes;
		for (j = 0; j < ntally && (t[j].rule != rule); j++)
			;
		if (j == ntally)
			t[ntally++] = (struct tally){ .rule = rule, .cause = c };
		t[j].bytes += s->bytes;
	}
	/* each cause's rule: the one that matched most of its bytes */
	for (j = 0; j < ntally; j++) {
		struct cause_bytes *cb = &out->v[t[j].cause];
		size_t best;

		for (best = 0; best < ntally; best++)
			if (t[best].cause == t[j].cause && t[best].bytes > t[j].bytes)
				break;
		if (best == ntally && !cb->rule)
			cb->rule = t[j].rule;
	}
	/* keep the causes that matched, most bytes first */
	for (k = 0, j = 0; k < ncauses; k++)
		if (out->v[k].cause)
			out->v[j++] = out->v[k];
	out->n = j;
	qsort(out->v, out->n, sizeof(*out->v), by_bytes);
	err = 0;
cleanup:
	free(t);
	if (err)
		causes__report_free(out);
	return err;
}

void causes__report_free(struct cause_report *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int causes__by_request(const struct model *m, struct cause_requests *out)
{
	const struct profile *p = &m->profile;
	const struct cause_rule *rule;
	int *cause_of = NULL, c, r;
	size_t k, width;

	memset(out, 0, sizeof(*out));
	out->nreq = m->nrequests;
	out->ncauses = m->rules.ncauses;
	width = out->ncauses + 1;
	out->bytes = calloc(out->nreq ? out->nreq * width : 1, sizeof(*out->bytes));
	cause_of = calloc(p->nstacks ? p->nstacks : 1, sizeof(*cause_of));
	if (!out->bytes || !cause_of) {
		free(cause_of);
		causes__requests_free(out);
		return -ENOMEM;
	}
	/* each stack's cause once, as causes__attribute() finds it */
	for (k = 0; k < p->nstacks; k++) {
		c = causes__match_stack(m, &p->stacks[k], &rule);
		cause_of[k] = c < 0 ? (int)out->ncauses : c;
	}
	for (k = 0; k < p->nwhen && out->nreq; k++) {
		const struct profile_when *w = &p->when[k];

		r = model__request_of(m, w->pid, w->ts_ns);
		if (r >= 0 && w->stack < p->nstacks)
			out->bytes[(size_t)r * width + cause_of[w->stack]] += w->weight;
	}
	out->dropped_samples = p->when_dropped;
	out->nsteady = model__steady_requests(m, out->steady);
	free(cause_of);
	return 0;
}

bool causes__per_request(const struct cause_requests *cr, size_t c, double *per)
{
	double sum = 0;
	unsigned int i;

	*per = 0;
	if (!cr->nsteady || c > cr->ncauses)
		return false;
	for (i = 0; i < cr->nsteady; i++)
		sum += (double)causes__request_bytes(cr, cr->steady[i], c);
	*per = sum / cr->nsteady;
	return true;
}

size_t causes__index(const struct model *m, const struct cause *cause)
{
	return cause ? (size_t)(cause - m->rules.causes) : m->rules.ncauses;
}

int causes__span(const struct model *m, const struct cause_filter *f, struct cause_span *out)
{
	const struct profile *p = &m->profile;
	const struct cause_rule *rule;
	int *cause_of = NULL, c;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->ncauses = m->rules.ncauses;
	out->bytes = calloc(out->ncauses + 1, sizeof(*out->bytes));
	cause_of = calloc(p->nstacks ? p->nstacks : 1, sizeof(*cause_of));
	if (!out->bytes || !cause_of) {
		free(cause_of);
		causes__span_free(out);
		return -ENOMEM;
	}
	for (k = 0; k < p->nstacks; k++) {
		c = causes__match_stack(m, &p->stacks[k], &rule);
		cause_of[k] = c < 0 ? (int)out->ncauses : c;
	}
	for (k = 0; k < p->nwhen; k++) {
		const struct profile_when *w = &p->when[k];

		if ((f->pid && w->pid != f->pid) || w->ts_ns < f->from_ns ||
		    (f->to_ns && w->ts_ns > f->to_ns) || (f->origin && w->origin != f->origin) ||
		    w->stack >= p->nstacks ||
		    (f->phase1 && p->stacks[w->stack].phase + 1 != f->phase1))
			continue;
		out->bytes[cause_of[w->stack]] += w->weight;
		out->total += w->weight;
	}
	free(cause_of);
	return 0;
}

const char *causes__label(const struct model *m, __u32 origin, __u32 phase1, char *buf,
			  size_t len)
{
	const struct origin *o = origins__at(&m->origins, origin);
	struct cause_filter f = { .origin = origin, .phase1 = phase1 };
	__u64 matched = 0, best;
	struct cause_span cs;
	size_t c, pick, off = 0, shown = 0;

	if (!o || !len || (o->how != MP_ORIGIN_BRK && !o->arena) || causes__span(m, &f, &cs))
		return NULL;
	for (c = 0; c < cs.ncauses; c++)
		if (cs.bytes[c] * 20 >= cs.total)
			matched += cs.bytes[c];
	buf[0] = '\0';
	/* the largest first (ties: rule order); each taken is zeroed */
	while (cs.total && matched * 2 >= cs.total && shown < 3) {
		best = 0;
		pick = cs.ncauses;
		for (c = 0; c < cs.ncauses; c++)
			if (cs.bytes[c] * 20 >= cs.total && cs.bytes[c] > best)
				best = cs.bytes[c], pick = c;
		if (pick == cs.ncauses)
			break;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s %.0f%%",
					shown ? ", " : "", m->rules.causes[pick].name,
					100.0 * (double)cs.bytes[pick] / (double)cs.total);
		cs.bytes[pick] = 0;
		shown++;
	}
	causes__span_free(&cs);
	return shown && off < len ? buf : NULL;
}

void causes__span_free(struct cause_span *cs)
{
	free(cs->bytes);
	memset(cs, 0, sizeof(*cs));
}

void causes__requests_free(struct cause_requests *cr)
{
	free(cr->bytes);
	memset(cr, 0, sizeof(*cr));
}

static bool engine_accepts(void *ctx, const char *flag)
{
	return model_engine__accepts(ctx, flag);
}

const char *causes__remedy(const struct model *m, const struct cause *c, char *buf,
			   size_t len)
{
	return causerules__remedy(c, m->engine.flags ? engine_accepts : NULL,
				  (void *)&m->engine, buf, len);
}
