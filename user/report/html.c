// SPDX-License-Identifier: GPL-2.0
/* The HTML report: the page (html.js, html.css) with the run's data inside. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json.h"
#include "lib/strmap.h"
#include "model/causes.h"
#include "report/html.h"
#include "report/phase_json.h"
#include "report/plateau.h"
#include "report/settings.h"
#include "report/requests.h"
/* html_js, html_css: generated from html.js and html.css into the build directory */
#include "report/html_assets.h"

static void title(struct jsonw *w, const struct model *m)
{
	char buf[512] = "memphase";
	size_t used = strlen(buf);
	char **a;

	for (a = m->argv; a && *a && used < sizeof(buf) - 1; a++) {
		int n = snprintf(buf + used, sizeof(buf) - used, "%s%s", a == m->argv ? ": " : " ",
				 *a);

		used = n < 0 || used + n >= sizeof(buf) ? sizeof(buf) - 1 : used + n;
	}
	jsonw__string_field(w, "title", buf);
}

/* phases[]: the JSON summary's shape (phase_json.h), with the id colours are chosen by and
 * the bytes the stack samples carried */
static void phases(struct jsonw *w, const struct model *m)
{
	unsigned int i;

	jsonw__name(w, "phase_names");
	jsonw__start_array(w);
	for (i = 0; i < m->nphases; i++)
		jsonw__string(w, m->names[i]);
	jsonw__end_array(w);
	jsonw__name(w, "phases");
	jsonw__start_array(w);
	for (i = 0; i < m->norder; i++) {
		unsigned int id = m->order[i];

		jsonw__start_object(w);
		jsonw__u64_field(w, "id", id);
		phase_json__fields(w, m, id);
		jsonw__u64_field(w, "sampled_bytes", m->sampled_bytes[id]);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

static void memory(struct jsonw *w, const struct model *m, const struct timeline *tl)
{
	const struct history *h = &m->history;
	unsigned int i, n = tl ? timeline__len(tl) : 0;
	__u64 limit = 0;
	int c;

	jsonw__name(w, "timeline");
	jsonw__start_array(w);
	for (i = 0; i < n; i++) {
		const struct timeline_sample *t = timeline__at(tl, i);

		/* a reading after the run's end (the root gone, not noticed yet) is not of it */
		if (m->end_ns && t->ts_ns > m->end_ns)
			continue;
		jsonw__start_array(w);
		jsonw__double(w, model__rel_s(m, t->ts_ns));
		for (c = 0; c < MP_NR_CLASSES; c++)
			jsonw__s64(w, t->rss[mp_class_order[c]]);
		jsonw__end_array(w);
	}
	jsonw__end_array(w);
	for (i = 0; i < h->nmem; i++)
		if (h->mem[i].cg_limit)
			limit = h->mem[i].cg_limit;
	for (i = 0; !limit && i < m->nooms; i++)
		limit = m->ooms[i].cgroup_limit;
	if (limit)
		jsonw__u64_field(w, "limit", limit);
	else
		jsonw__null_field(w, "limit");
	jsonw__name(w, "ooms");
	jsonw__start_array(w);
	for (i = 0; i < m->nooms; i++) {
		char comm[MP_COMM_LEN + 1];

		snprintf(comm, sizeof(comm), "%.*s", MP_COMM_LEN, m->ooms[i].comm);
		jsonw__start_object(w);
		jsonw__double_field(w, "t", model__rel_s(m, m->ooms[i].ts_ns));
		jsonw__string_field(w, "comm", comm);
		jsonw__u64_field(w, "pid", m->ooms[i].pid);
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
}

/* The string table: index of s, added the first time. -1 on ENOMEM. */
static long str_index(struct jsonw *w, struct strmap *idx, long *n, const char *s)
{
	struct strmap_entry *e = strmap__get(idx, s);

	if (!e)
		return -1;
	if (!e->value) {
		e->value = ++*n;
		jsonw__string(w, s);
	}
	return e->value - 1;
}

/* The causes of the rules (a stack names one by its index), and the peak they are shares of. */
static void cause_names(struct jsonw *w, const struct model *m)
{
	char rem[CAUSES_REMEDY_MAX];
	size_t i;

	jsonw__name(w, "causes");
	jsonw__start_array(w);
	for (i = 0; i < m->rules.ncauses; i++) {
		jsonw__start_object(w);
		jsonw__string_field(w, "name", m->rules.causes[i].name);
		jsonw__string_field(w, "remedy", causes__remedy(m, &m->rules.causes[i], rem,
								sizeof(rem)));
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	/* the processes' peak together, as the summary's */
	if (m->tree_peak_total > 0)
		jsonw__s64_field(w, "peak_total", m->tree_peak_total);
	else
		jsonw__null_field(w, "peak_total");
}

/*
 * Each stack: [phase, comm, [frames], cause, rule], the strings by their index in the
 * table, cause and rule -1 when no rule matched (model/causes.c decides, as for causes[]).
 */
static int stacks(struct jsonw *w, const struct model *m)
{
	const struct profile *p = &m->profile;
	const struct cause_rule **rule = NULL;
	struct strmap idx;
	int *cause = NULL;
	long n = 0;
	size_t i, k;
	int err = 0;

	rule = calloc(p->nstacks ? p->nstacks : 1, sizeof(*rule));
	cause = calloc(p->nstacks ? p->nstacks : 1, sizeof(*cause));
	if (!rule || !cause)
		err = -ENOMEM;
	for (i = 0; i < p->nstacks && !err; i++)
		cause[i] = causes__match_stack(m, &p->stacks[i], &rule[i]);
	/* strings first (the stacks refer to them by index) */
	strmap__init(&idx, NULL);
	jsonw__name(w, "strings");
	jsonw__start_array(w);
	for (i = 0; i < p->nstacks && !err; i++) {
		if (str_index(w, &idx, &n, p->stacks[i].comm) < 0)
			err = -ENOMEM;
		for (k = 0; k < p->stacks[i].nframes && !err; k++)
			if (str_index(w, &idx, &n, p->stacks[i].frames[k]) < 0)
				err = -ENOMEM;
		if (!err && cause[i] >= 0 && rule[i] && str_index(w, &idx, &n, rule[i]->text) < 0)
			err = -ENOMEM;
	}
	jsonw__end_array(w);
	jsonw__name(w, "stacks");
	jsonw__start_array(w);
	for (i = 0; i < p->nstacks && !err; i++) {
		const struct profile_stack *s = &p->stacks[i];

		jsonw__start_array(w);
		jsonw__u64(w, s->phase);
		jsonw__u64(w, strmap__find(&idx, s->comm)->value - 1);
		jsonw__start_array(w);
		for (k = 0; k < s->nframes; k++)
			jsonw__u64(w, strmap__find(&idx, s->frames[k])->value - 1);
		jsonw__end_array(w);
		jsonw__s64(w, cause[i]);
		jsonw__s64(w, cause[i] >= 0 && rule[i] ?
			   (__s64)strmap__find(&idx, rule[i]->text)->value - 1 : -1);
		jsonw__end_array(w);
	}
	jsonw__end_array(w);
	strmap__free(&idx);
	free(rule);
	free(cause);
	/* every sample: time (ms), stack, bytes */
	jsonw__name(w, "samples");
	jsonw__start_array(w);
	for (i = 0; i < p->nwhen && !err; i++) {
		jsonw__double(w, (double)(__s64)(model__rel_s(m, p->when[i].ts_ns) * 1e6) / 1e3);
		jsonw__u64(w, p->when[i].stack);
		jsonw__u64(w, p->when[i].weight);
	}
	jsonw__end_array(w);
	return err;
}

/* The data as JSON inside <script>: a '<' in it (only in strings) becomes \u003c, so
 * no name can end the script. */
static int data(FILE *f, const struct output_ctx *ctx)
{
	const struct model *m = ctx->m;
	struct jsonw *w;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -ENOMEM;
	w = jsonw__new(mem, false);
	if (!w) {
		fclose(mem);
		free(buf);
		return -ENOMEM;
	}
	jsonw__start_object(w);
	title(w, m);
	jsonw__double_field(w, "duration_s", model__rel_s(m, m->end_ns));
	phases(w, m);
	memory(w, m, ctx->tl);
	requests__json(w, m);
	settings__json(w, m);
	plateau__json(w, m);
	cause_names(w, m);
	err = stacks(w, m);
	jsonw__end_object(w);
	jsonw__free(w);
	if (fclose(mem) || !buf) {
		free(buf);
		return -ENOMEM;
	}
	for (i = 0; i < len && !err; i++) {
		if (buf[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(buf[i], f);
	}
	free(buf);
	return err;
}

static int html_write(FILE *f, const struct output_ctx *ctx)
{
	int err;

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<title>memphase report</title>\n<style>\n", f);
	fputs(html_css, f);
	fputs("</style></head><body>\n<h1 id=\"title\"></h1>\n"
	      "<h2>RSS over time<span class=\"legend\" id=\"legend\"></span></h2>\n"
	      "<svg id=\"chart\" width=\"1000\" height=\"260\"></svg>\n"
	      "<div>click a phase or a request, or drag a time range; the causes and the flame "
	      "graph follow</div>\n"
	      "<h2>Phases</h2>\n<table id=\"phases\"><thead><tr><th>phase</th><th>time</th>"
	      "<th>calls</th><th>+anon</th><th>+file</th><th>+shmem</th><th>+swap</th>"
	      "<th>sampled</th></tr></thead><tbody></tbody></table>\n"
	      "<div id=\"requests-box\" hidden><h2><span id=\"requests-n\"></span> "
	      "(RSS each kept)</h2>\n<div class=\"scroll\"><table id=\"requests\"><thead><tr>"
	      "<th>#</th><th>start</th><th>time</th><th>prompt</th><th>generated</th><th>anon</th>"
	      "<th>file</th><th>shmem</th><th>swap</th><th>by phase</th></tr></thead><tbody>"
	      "</tbody></table></div></div>\n"
	      "<div id=\"ceilings-box\" hidden><h2>Where it stops</h2>\n<table id=\"ceilings\">"
	      "<thead><tr><th>cause</th><th>now</th><th>ceiling</th><th>per request</th>"
	      "<th>bound by</th></tr></thead><tbody></tbody></table>\n"
	      "<ul id=\"verdict\"></ul></div>\n"
	      "<div id=\"engine-box\" hidden><h2 id=\"engine-h\"></h2>\n<table id=\"engine\">"
	      "<thead><tr><th>setting</th><th>value</th><th>from</th><th>what</th></tr></thead>"
	      "<tbody></tbody></table>\n<div id=\"engine-other\"></div></div>\n"
	      "<h2>What grew<span id=\"causes-sel\"></span></h2>\n<table id=\"causes\"><thead>"
	      "<tr><th>cause</th><th>sampled</th><th>share</th><th>of peak</th><th>where</th>"
	      "<th>remedy</th></tr></thead><tbody></tbody></table>\n"
	      "<h2>Growth by code path: <span id=\"flame-total\"></span></h2>\n"
	      "<div id=\"bar\"><button id=\"all\">whole run</button> "
	      "<button id=\"unzoom\">reset zoom</button> search <input id=\"search\"> "
	      "<span id=\"matched\"></span></div>\n<div id=\"tip\"></div>\n"
	      "<div id=\"flame\" style=\"width:1000px\"></div>\n"
	      "<script type=\"application/json\" id=\"data\">", f);
	err = data(f, ctx);
	fputs("</script>\n<script>\n", f);
	fputs(html_js, f);
	fputs("</script>\n</body></html>\n", f);
	fflush(f);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

const struct output_format html_format = {
	.name = "html",
	.help = "Write a self-contained HTML report (RSS over time with the phases and requests, "
		"the phase and request tables, what grew and a flame graph of the growth that "
		"follow the selection) to FILE",
	.needs = OUTPUT_NEEDS_STACKS,
	.write = html_write,
};
