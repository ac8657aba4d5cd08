// SPDX-License-Identifier: GPL-2.0
/* Where host RAM stops: the causes' ceilings and their plateau (see ceilings.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/causes.h"
#include "model/ceilings.h"
#include "lib/util.h"

#define CEILING_MARGIN	0.9	/* a suggestion leaves a tenth of the room free */
#define SIM_MAX		10000000	/* requests simulated, at most */

static __s64 rss_total(const __s64 *v)
{
	return v[MP_FILE] + v[MP_ANON] + v[MP_SHMEM];
}

/*
 * The mappings the cause's stacks grew in: their lengths and exact growth, and what grew in
 * the heap or an arena (or a mapping of unknown origin), which no one mapping's size
 * bounds: a buffer made once holds there what it holds now. False if none.
 */
static bool mapped(const struct model *m, size_t c, __u64 *len, __u64 *grown, __u64 *shared)
{
	const struct profile *p = &m->profile;
	const struct cause_rule *rule;
	__u32 *seen = NULL, nseen = 0, i, k;

	*len = *grown = *shared = 0;
	seen = calloc(p->nstacks + 1, sizeof(*seen));
	if (!seen)
		return false;
	for (i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const struct origin *o;
		bool dup = false;

		if (causes__match_stack(m, s, &rule) != (int)c)
			continue;
		o = origins__at(&m->origins, s->origin);
		if (!o || o->arena || o->how == MP_ORIGIN_BRK) {
			*shared += s->bytes;
			continue;
		}
		for (k = 0; k < nseen && !dup; k++)
			dup = seen[k] == s->origin;
		if (dup)
			continue;
		seen[nseen++] = s->origin;
		*len += o->len;
		*grown += o->grown < o->len ? o->grown : o->len;
	}
	free(seen);
	return nseen || *shared;
}

static int phase_id(const struct model *m, const char *name)
{
	unsigned int i;

	for (i = 0; name && i < m->nphases; i++)
		if (!strcmp(m->names[i], name))
			return i;
	return -1;
}

/* "--cache-ram 8192 (default)": the setting's flag, value and where it came from. */
static void setting_str(const struct model *m, const char *name, char *buf, size_t len)
{
	const struct engine_setting *s = model_engine__get(&m->engine, name);

	if (!s) {
		snprintf(buf, len, "%s (not read)", name);
		return;
	}
	snprintf(buf, len, "%s %.96s%s", s->flag[0] ? s->flag : s->name, s->value,
		 s->src == ENGINE_SRC_DEFAULT ? (s->from[0] ? " (auto)" : " (default)") :
		 s->src == ENGINE_SRC_ENV ? " (environment)" : "");
}

/*
 * The cause's units: one per entry of the rule's phase (per recorded call when its marker
 * records what it copies), each holding the most it said it copied or the mean each added,
 * whichever is more: a unit made early (a checkpoint of a short context) is smaller, and
 * memory a unit reuses adds less than it holds.
 */
static void units_of(const struct model *m, const struct cause_ceiling *rule, __u64 bytes,
		     struct ceiling *cl)
{
	int id = phase_id(m, rule->phase);

	cl->units = id >= 0 ? m->stats[id].entries : 0;
	if (id >= 0 && m->rec_calls[id])
		cl->units = m->rec_calls[id];
	cl->unit_bytes = cl->units ? bytes / cl->units : 0;
	if (id >= 0 && m->rec_max[id] > cl->unit_bytes)
		cl->unit_bytes = m->rec_max[id];
}

static void one(const struct model *m, const struct cause *cause, __u64 bytes,
		struct ceiling *cl)
{
	const struct cause_ceiling *rule = &cause->ceiling;
	size_t c = causes__index(m, cause);
	char a[256], b[512], x[24];
	long long v, prod = 1;
	unsigned int k;
	__u64 len, grown, shared;

	cl->cause = cause;
	cl->now = bytes;
	cl->state = CEILING_UNBOUNDED;
	switch (rule->kind) {
	case CEILING_MAPPINGS:
		if (!mapped(m, c, &len, &grown, &shared)) {
			cl->state = CEILING_UNKNOWN;
			snprintf(cl->how, sizeof(cl->how), "its mappings (none seen)");
			break;
		}
		/* what it holds is its sampled growth, as "What grew" says; the mappings still
		 * untouched are what it may add */
		cl->state = CEILING_BOUNDED;
		cl->ceiling = bytes + (len > grown ? len - grown : 0);
		if (shared && len)
			snprintf(cl->how, sizeof(cl->how), "its mappings' size, and %s in the heap as "
				 "it is", util__fmt_bytes(x, sizeof(x), shared));
		else if (shared)
			snprintf(cl->how, sizeof(cl->how), "made once: as it is");
		else
			snprintf(cl->how, sizeof(cl->how), "its mappings' size");
		break;
	case CEILING_SETTING:
		cl->setting = rule->setting;
		v = model_engine__int(&m->engine, rule->setting, LLONG_MIN);
		setting_str(m, rule->setting, a, sizeof(a));
		cl->value = v;
		if (v == LLONG_MIN) {
			cl->state = CEILING_UNKNOWN;
		} else if (v < 0) {
			cl->state = CEILING_UNBOUNDED;
		} else if (!v) {
			cl->state = CEILING_OFF;
		} else {
			cl->state = CEILING_BOUNDED;
			cl->ceiling = (__u64)v * rule->unit;
		}
		snprintf(cl->how, sizeof(cl->how), "%s%s", a, v < 0 && v != LLONG_MIN ?
			 ": no cap" : !v ? ": off" : "");
		if (rule->phase) {
			units_of(m, rule, bytes, cl);
			snprintf(cl->how + strlen(cl->how), sizeof(cl->how) - strlen(cl->how),
				 "; %llu entr%s, %s each", (unsigned long long)cl->units,
				 cl->units == 1 ? "y" : "ies",
				 util__fmt_bytes(x, sizeof(x), cl->unit_bytes));
		}
		break;
	case CEILING_UNITS:
		units_of(m, rule, bytes, cl);
		b[0] = '\0';
		for (k = 0; k < rule->nfactors; k++) {
			v = model_engine__int(&m->engine, rule->factors[k], LLONG_MIN);
			setting_str(m, rule->factors[k], a, sizeof(a));
			snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%s", k ? " x " : "", a);
			if (!k) {
				cl->setting = rule->factors[k];
				cl->value = v;
			}
			if (v == LLONG_MIN || prod == LLONG_MIN) {
				prod = LLONG_MIN;
				continue;
			}
			prod = v < 0 ? -1 : prod * v;
		}
		if (prod == LLONG_MIN || !cl->units) {
			cl->state = CEILING_UNKNOWN;
		} else if (prod < 0) {
			cl->state = CEILING_UNBOUNDED;
		} else if (!prod) {
			cl->state = CEILING_OFF;
		} else {
			cl->state = CEILING_BOUNDED;
			cl->max_units = prod;
			cl->ceiling = cl->unit_bytes * (__u64)prod;
		}
		if (cl->units)
			snprintf(cl->how, sizeof(cl->how), "%s; %llu made, %s each", b,
				 (unsigned long long)cl->units,
				 util__fmt_bytes(x, sizeof(x), cl->unit_bytes));
		else
			snprintf(cl->how, sizeof(cl->how), "%s; no %s seen", b, rule->phase);
		break;
	default:
		break;
	}
}

static int by_ceiling(const void *a, const void *b)
{
	const struct ceiling *x = a, *y = b;
	bool bx = x->state == CEILING_BOUNDED, by = y->state == CEILING_BOUNDED;

	if (bx != by)
		return bx ? -1 : 1;
	if (bx)
		return x->ceiling < y->ceiling ? 1 : x->ceiling > y->ceiling ? -1 : 0;
	return x->now < y->now ? 1 : x->now > y->now ? -1 : 0;
}

/* Requests until the room is gone, each adding every cause's mean up to its ceiling. */
static long simulate(const struct ceilings *out)
{
	__u64 held[CEILINGS_MAX];
	double used = 0, step;
	unsigned int i;
	long n;

	for (i = 0; i < out->n; i++)
		held[i] = out->v[i].now;
	for (n = 0; n < SIM_MAX; n++) {
		step = out->unbounded_per_request;
		for (i = 0; i < out->n; i++) {
			const struct ceiling *c = &out->v[i];
			double add;

			if (c->state != CEILING_BOUNDED || c->per_request <= 0 ||
			    held[i] >= c->ceiling)
				continue;
			add = c->per_request;
			if (held[i] + add > c->ceiling)
				add = c->ceiling - held[i];
			held[i] += add;
			step += add;
		}
		if (step <= 0)
			return -1;
		used += step;
		if (used > out->room)
			return n;
	}
	return -1;
}

/* A unit of the cause's setting in bytes: the rule's unit, or one unit times the others. */
static double setting_unit(const struct model *m, const struct ceiling *c)
{
	const struct cause_ceiling *rule = &c->cause->ceiling;
	double per;
	unsigned int k;

	if (rule->kind == CEILING_SETTING)
		return (double)rule->unit;
	per = (double)c->unit_bytes;
	for (k = 1; k < rule->nfactors; k++)
		per *= (double)model_engine__int(&m->engine, rule->factors[k], 1);
	return per;
}

/*
 * The settings that, lowered, make the plateau fit: the bounded cause with a setting that
 * has the most still to grow first, lowered to what fits (a round number: 64 steps above
 * 256; 0 may be the setting's "off"), then the next while that is not enough.
 */
static void suggest(const struct model *m, struct ceilings *out)
{
	bool used[CEILINGS_MAX] = {};
	double need, cut, per;
	long long v;
	unsigned int i, k;

	need = (double)out->plateau - out->rss - CEILING_MARGIN * out->room;
	out->suggest_plateau = out->plateau;
	while (need > 0 && out->nsuggest < CEILINGS_MAX_SUGGEST) {
		const struct ceiling *best = NULL;

		for (i = 0, k = CEILINGS_MAX; i < out->n; i++) {
			const struct ceiling *c = &out->v[i];

			if (used[i] || c->state != CEILING_BOUNDED || !c->setting ||
			    c->ceiling <= c->now)
				continue;
			if (!best || c->ceiling - c->now > best->ceiling - best->now)
				best = c, k = i;
		}
		if (!best)
			break;
		used[k] = true;
		per = setting_unit(m, best);
		if (per <= 0)
			continue;
		/* what it may hold: what it holds now and what it is still allowed */
		cut = need < (double)(best->ceiling - best->now) ? need :
		      (double)(best->ceiling - best->now);
		v = (long long)(((double)best->ceiling - cut) / per);
		if (v > 256)
			v -= v % 64;
		if (v >= best->value)
			continue;
		out->suggest[out->nsuggest].cause = best;
		out->suggest[out->nsuggest++].value = v;
		out->suggest_plateau -= (__s64)best->ceiling - (__s64)((double)v * per);
		need -= (double)best->ceiling - (double)v * per;
	}
	out->culprit = out->nsuggest ? out->suggest[0].cause : NULL;
}

int ceilings__compute(const struct model *m, struct ceilings *out)
{
	const struct model_proc *p = model__main((struct model *)m);
	struct cause_requests cr = {};
	struct cause_report r;
	__s64 rooms[2] = {};
	unsigned int i;
	double per;
	size_t c;
	int err;

	memset(out, 0, sizeof(*out));
	out->requests_left = -1;
	err = causes__attribute(m, NULL, NULL, &r);
	if (err)
		return err;
	if (causes__by_request(m, &cr))
		memset(&cr, 0, sizeof(cr));
	out->have_requests = cr.nsteady > 0;
	for (i = 0; i < r.n && out->n < CEILINGS_MAX; i++) {
		struct ceiling *cl = &out->v[out->n];

		if (!r.v[i].cause)
			continue;
		one(m, r.v[i].cause, r.v[i].bytes, cl);
		cl->per_request = causes__per_request(&cr, causes__index(m, r.v[i].cause), &per) ?
				  per : -1;
		out->have |= r.v[i].cause->ceiling.kind != CEILING_NONE;
		out->n++;
	}
	qsort(out->v, out->n, sizeof(out->v[0]), by_ceiling);
	/* the engine's RSS now, or, once it ended, at its peak */
	out->rss = !p ? 0 : model_proc__followed(p) ? rss_total(p->rss) : p->peak_total;
	for (i = 0; i < out->n; i++) {
		const struct ceiling *cl = &out->v[i];

		if (cl->state == CEILING_BOUNDED && cl->ceiling > cl->now)
			out->to_fill += cl->ceiling - cl->now;
		if ((cl->state == CEILING_UNBOUNDED || cl->state == CEILING_UNKNOWN) &&
		    cl->per_request > 0)
			out->unbounded_per_request += cl->per_request;
	}
	c = m->rules.ncauses;
	if (causes__per_request(&cr, c, &per) && per > 0)
		out->unbounded_per_request += per;
	out->plateau = out->rss + (__s64)out->to_fill;
	/* the room as last read, less what the process grew since */
	if (m->room_cgroup_known)
		rooms[0] = m->room_cgroup - (out->rss > m->room_rss ? out->rss - m->room_rss : 0);
	if (m->room_system_known)
		rooms[1] = m->room_system - (out->rss > m->room_rss ? out->rss - m->room_rss : 0);
	if (m->room_cgroup_known && (!m->room_system_known || rooms[0] <= rooms[1])) {
		out->room_known = true;
		out->room = rooms[0];
		out->room_what = "the memory cgroup's limit";
	} else if (m->room_system_known) {
		out->room_known = true;
		out->room = rooms[1];
		out->room_what = "MemAvailable";
	}
	for (i = 0; i < out->n; i++) {
		const struct ceiling *cl = &out->v[i];
		long n;

		if (cl->state != CEILING_BOUNDED || cl->per_request <= 0 || cl->ceiling <= cl->now)
			continue;
		n = (long)((cl->ceiling - cl->now) / cl->per_request + 0.999);
		if (n > out->requests_to_fill) {
			out->requests_to_fill = n;
			out->last_full = cl;
		}
	}
	if (out->room_known) {
		if (out->room < 0)
			out->room = 0;
		out->fits = (__s64)out->to_fill < out->room;
		out->requests_left = out->have_requests ? simulate(out) : -1;
		if (!out->fits)
			suggest(m, out);
	}
	causes__report_free(&r);
	causes__requests_free(&cr);
	return 0;
}
