// SPDX-License-Identifier: GPL-2.0
/* Where it stops: the causes' ceilings and the plateau, as text and JSON (model/ceilings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "lib/textwrap.h"
#include "lib/util.h"
#include "model/ceilings.h"
#include "report/plateau.h"

static const char *const state_names[] = {
	[CEILING_UNBOUNDED] = "unbounded", [CEILING_BOUNDED] = "bounded",
	[CEILING_UNKNOWN] = "unknown", [CEILING_OFF] = "off",
};

static const char *per_req(char *b, size_t len, double per)
{
	char v[24];

	if (per < 0)
		return "-";
	snprintf(b, len, "+%s", util__fmt_bytes(v, sizeof(v), per > 0 ? (__u64)per : 0));
	return b;
}

/* "--cache-ram 2048": the flag of the culprit's setting, as its rule names it */
static const char *flag_of(const struct model *m, const char *setting)
{
	const struct engine_setting *s = model_engine__get(&m->engine, setting);

	return s && s->flag[0] ? s->flag : setting;
}

static void print_forecast(FILE *f, const struct model *m, const struct ceilings *cs)
{
	char a[24], b[24], c[64 * 4 + 1];
	unsigned int i;

	if (!cs->room_known)
		return;
	util__fmt_bytes(a, sizeof(a), cs->room > 0 ? cs->room : 0);
	if (cs->fits) {
		fprintf(f, "  it fits: %s left of %s", a, cs->room_what);
		if (cs->requests_left >= 0)
			fprintf(f, "; the unbounded growth uses it up after ~%ld more requests",
				cs->requests_left);
		fprintf(f, "\n");
		if (cs->last_full) {
			utf8__esc_term(c, sizeof(c), cs->last_full->cause->name);
			fprintf(f, "  at this rate %s reaches its ceiling after ~%ld more "
				"requests\n", c, cs->requests_to_fill);
		}
		return;
	}
	fprintf(f, "  it does not fit: %s left of %s", a, cs->room_what);
	if (cs->requests_left >= 0)
		fprintf(f, ", used up after ~%ld more requests", cs->requests_left);
	if (cs->culprit) {
		utf8__esc_term(c, sizeof(c), cs->culprit->cause->name);
		fprintf(f, ", before the %s reaches its ceiling", c);
	}
	fprintf(f, "\n");
	if (!cs->nsuggest)
		return;
	fprintf(f, " ");
	for (i = 0; i < cs->nsuggest; i++)
		fprintf(f, "%s %s %lld", !i ? "" : i + 1 == cs->nsuggest ? " and" : ",",
			flag_of(m, cs->suggest[i].cause->setting), cs->suggest[i].value);
	/* the plateau is RSS, the room what the cgroup or the system has left: say both */
	fprintf(f, " keep%s the plateau at %s", cs->nsuggest == 1 ? "s" : "",
		util__fmt_bytes(b, sizeof(b), cs->suggest_plateau > 0 ? cs->suggest_plateau : 0));
	if (cs->suggest_plateau - cs->rss < cs->room)
		fprintf(f, ", %s of the room left\n", util__fmt_bytes(a, sizeof(a),
			cs->room - (cs->suggest_plateau - cs->rss)));
	else
		fprintf(f, " (still more than the room: see the other causes)\n");
}

/* Where host RAM levels off, and whether that fits: the summary's lines, the JSON's text. */
static void print_verdict(FILE *f, const struct model *m, const struct ceilings *cs)
{
	char a[24], b[24], c[24];

	fprintf(f, "  host RAM levels off at %s once every bounded cause is full (%s to go)",
		util__fmt_bytes(a, sizeof(a), cs->plateau > 0 ? cs->plateau : 0),
		util__fmt_bytes(b, sizeof(b), cs->to_fill));
	if (cs->have_requests)
		fprintf(f, "; causes with no known bound add %s per request",
			per_req(c, sizeof(c), cs->unbounded_per_request));
	fprintf(f, "\n");
	print_forecast(f, m, cs);
}

void plateau__print(FILE *f, const struct model *m)
{
	struct ceilings cs;
	char n[64], a[24], b[24], c[24], h[640], *buf = NULL;
	unsigned int i;
	size_t len = 0;
	FILE *mem;
	int col;

	if (ceilings__compute(m, &cs) || !cs.have)
		return;
	fprintf(f, "\nWhere it stops (each cause's ceiling; its growth per request)\n");
	fprintf(f, "%-26s %10s %10s %10s  %s\n", "CAUSE", "NOW", "CEILING", "PER REQ", "BOUND BY");
	for (i = 0; i < cs.n; i++) {
		const struct ceiling *cl = &cs.v[i];

		utf8__esc_term(n, sizeof(n), cl->cause->name);
		utf8__esc_term(h, sizeof(h), cl->how);
		col = fprintf(f, "%-26.26s %10s %10s %10s  ", n,
			      util__fmt_bytes(a, sizeof(a), cl->now),
			      cl->state == CEILING_BOUNDED ? util__fmt_bytes(b, sizeof(b), cl->ceiling) :
			      cl->state == CEILING_OFF ? "off" : cl->state == CEILING_UNKNOWN ? "?" :
			      "none", per_req(c, sizeof(c), cl->per_request));
		textwrap__print(f, col, 4, cl->state == CEILING_UNBOUNDED &&
				!cl->cause->ceiling.kind ? "-" : h);
	}
	/* the verdict's lines, wrapped (the JSON has them whole) */
	mem = open_memstream(&buf, &len);
	if (!mem) {
		print_verdict(f, m, &cs);
		return;
	}
	print_verdict(mem, m, &cs);
	fclose(mem);
	textwrap__lines(f, buf);
	free(buf);
}

/* "verdict": the summary's lines under the table, one string each (no indent) */
static void verdict_json(struct jsonw *w, const struct model *m, const struct ceilings *cs)
{
	char *buf = NULL, *line, *next;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	jsonw__name(w, "verdict");
	jsonw__start_array(w);
	if (mem) {
		print_verdict(mem, m, cs);
		fclose(mem);
	}
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		jsonw__string(w, line + strspn(line, " "));
	}
	jsonw__end_array(w);
	free(buf);
}

void plateau__json(struct jsonw *w, const struct model *m)
{
	struct ceilings cs;
	unsigned int i;

	jsonw__name(w, "ceilings");
	if (ceilings__compute(m, &cs) || !cs.have) {
		jsonw__null(w);
		return;
	}
	jsonw__start_object(w);
	jsonw__name(w, "causes");
	jsonw__start_array(w);
	for (i = 0; i < cs.n; i++) {
		const struct ceiling *cl = &cs.v[i];

		jsonw__start_object(w);
		jsonw__string_field(w, "name", cl->cause->name);
		jsonw__string_field(w, "state", state_names[cl->state]);
		jsonw__u64_field(w, "bytes", cl->now);
		if (cl->state == CEILING_BOUNDED)
			jsonw__u64_field(w, "ceiling_bytes", cl->ceiling);
		else
			jsonw__null_field(w, "ceiling_bytes");
		if (cl->per_request >= 0)
			jsonw__double_field(w, "per_request_bytes", cl->per_request);
		else
			jsonw__null_field(w, "per_request_bytes");
		jsonw__string_field(w, "rule", cl->cause->ceiling.text ? cl->cause->ceiling.text : "");
		jsonw__string_field(w, "bound_by", cl->how);
		if (cl->cause->ceiling.phase) {
			jsonw__u64_field(w, "units", cl->units);
			jsonw__u64_field(w, "unit_bytes", cl->unit_bytes);
			jsonw__u64_field(w, "max_units", cl->max_units);
		}
		jsonw__end_object(w);
	}
	jsonw__end_array(w);
	verdict_json(w, m, &cs);
	jsonw__s64_field(w, "rss_bytes", cs.rss);
	jsonw__s64_field(w, "plateau_bytes", cs.plateau);
	jsonw__u64_field(w, "to_fill_bytes", cs.to_fill);
	if (cs.have_requests)
		jsonw__double_field(w, "unbounded_per_request_bytes", cs.unbounded_per_request);
	else
		jsonw__null_field(w, "unbounded_per_request_bytes");
	jsonw__name(w, "room");
	if (!cs.room_known) {
		jsonw__null(w);
	} else {
		jsonw__start_object(w);
		jsonw__string_field(w, "of", cs.room_what);
		jsonw__s64_field(w, "bytes", cs.room);
		jsonw__bool_field(w, "fits", cs.fits);
		if (cs.requests_left >= 0)
			jsonw__s64_field(w, "requests_left", cs.requests_left);
		else
			jsonw__null_field(w, "requests_left");
		if (cs.nsuggest) {
			jsonw__name(w, "suggestion");
			jsonw__start_object(w);
			jsonw__name(w, "settings");
			jsonw__start_array(w);
			for (i = 0; i < cs.nsuggest; i++) {
				jsonw__start_object(w);
				jsonw__string_field(w, "cause", cs.suggest[i].cause->cause->name);
				jsonw__string_field(w, "flag",
						    flag_of(m, cs.suggest[i].cause->setting));
				jsonw__s64_field(w, "value", cs.suggest[i].value);
				jsonw__end_object(w);
			}
			jsonw__end_array(w);
			jsonw__s64_field(w, "plateau_bytes", cs.suggest_plateau);
			jsonw__bool_field(w, "fits", cs.suggest_plateau - cs.rss < cs.room);
			jsonw__end_object(w);
		} else {
			jsonw__null_field(w, "suggestion");
		}
		jsonw__end_object(w);
	}
	jsonw__end_object(w);
}
