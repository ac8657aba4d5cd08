// SPDX-License-Identifier: GPL-2.0
/* The engine's settings, as text and JSON (see settings.h). */
#include <string.h>
#include "lib/textwrap.h"
#include "lib/utf8.h"
#include "report/settings.h"

static const char *const engine_src_names[] = {
	[ENGINE_SRC_DEFAULT] = "default", [ENGINE_SRC_FLAG] = "flag", [ENGINE_SRC_ENV] = "env",
};

/*
 * "engine": null, or { "program", "pid", "settings": { NAME: { "value", "source", "from",
 * "what" } }, "unknown_flags": [ ... ], "build": null | { "flags", "deprecated": { FLAG:
 * REPLACEMENT } } }
 */
void settings__json(struct jsonw *w, const struct model *m)
{
	const struct model_engine *e = &m->engine;
	const char *p, *q, *eq;
	unsigned int i;

	jsonw__name(w, "engine");
	if (!e->known || !e->nsettings) {
		jsonw__null(w);
		return;
	}
	jsonw__start_object(w);
	jsonw__string_field(w, "program", e->program);
	jsonw__u64_field(w, "pid", e->pid);
	jsonw__name(w, "settings");
	jsonw__start_object(w);
	for (i = 0; i < e->nsettings; i++) {
		const struct engine_setting *s = &e->settings[i];

		jsonw__name(w, s->name);
		jsonw__start_object(w);
		jsonw__string_field(w, "value", s->value);
		jsonw__string_field(w, "source", s->src < 3 ? engine_src_names[s->src] : "?");
		jsonw__string_field(w, "from", s->from);
		jsonw__string_field(w, "what", s->what);
		jsonw__string_field(w, "flag", s->flag);
		jsonw__end_object(w);
	}
	jsonw__end_object(w);
	jsonw__name(w, "unknown_flags");
	jsonw__start_array(w);
	for (i = 0; i < e->nunknown; i++)
		jsonw__string(w, e->unknown[i]);
	jsonw__end_array(w);
	jsonw__name(w, "build");
	if (!e->flags) {
		jsonw__null(w);
	} else {
		jsonw__start_object(w);
		jsonw__u64_field(w, "flags", e->nflags);
		jsonw__name(w, "deprecated");
		jsonw__start_object(w);
		for (p = e->deprecated ? e->deprecated + 1 : ""; *p; p = q + 1) {
			char flag[ENGINE_FLAG_MAX], repl[ENGINE_FLAG_MAX];

			q = strchr(p, '\n');
			eq = memchr(p, '=', q ? (size_t)(q - p) : strlen(p));
			if (!q || !eq)
				break;
			snprintf(flag, sizeof(flag), "%.*s", (int)(eq - p), p);
			snprintf(repl, sizeof(repl), "%.*s", (int)(q - eq - 1), eq + 1);
			jsonw__string_field(w, flag, repl);
		}
		jsonw__end_object(w);
		jsonw__end_object(w);
	}
	jsonw__end_object(w);
}

/*
 * "Engine: llama-server (pid N), settings that bound host RAM", then a line each:
 * "  --ctx-size 102400        -c                 context size, tokens (0: the model's)".
 * Settings left at an empty default are left out; then the flags no setting names.
 */
void settings__print(FILE *f, const struct model *m)
{
	const struct model_engine *e = &m->engine;
	char v[ENGINE_VALUE_MAX * 4 + 1], from[ENGINE_FLAG_MAX * 4 + 16], prog[64 * 4 + 1];
	unsigned int i, col;

	if (!e->known || !e->nsettings)
		return;
	fprintf(f, "Engine: %s (pid %u), as it was started\n",
		utf8__esc_term(prog, sizeof(prog), e->program), e->pid);
	fprintf(f, "  %-21s %-7s %-8s %s\n", "SETTING", "VALUE", "FROM", "WHAT");
	for (i = 0; i < e->nsettings; i++) {
		const struct engine_setting *s = &e->settings[i];
		const char *flag = s->flag[0] ? s->flag : s->name;
		bool long_v, long_from;

		if (s->src == ENGINE_SRC_DEFAULT && !s->value[0])
			continue;
		utf8__esc_term(v, sizeof(v), s->value);
		if (s->src == ENGINE_SRC_DEFAULT)
			snprintf(from, sizeof(from), "%s", s->from[0] ? "auto" : "default");
		else if (s->src != ENGINE_SRC_ENV && !strcmp(s->from, flag))
			snprintf(from, sizeof(from), "given");	/* by the setting's own name */
		else
			snprintf(from, sizeof(from), "%s%s", s->src == ENGINE_SRC_ENV ? "$" : "",
				 s->from);
		/* a value or a source too long for its column (a path, $LLAMA_ARG_...) goes
		 * on the next line */
		long_v = strlen(v) > 7;
		long_from = strlen(from) > 8;
		col = (unsigned int)fprintf(f, "  %-21s %-7s %-8s ", flag, long_v ? "" : v,
					    long_from ? "" : from);
		textwrap__print(f, (int)col, (int)col, s->what);
		if (long_v || long_from)
			fprintf(f, "%4s%s%s%s%s\n", "", long_v ? v : "",
				long_v && long_from ? " " : "", long_from ? "from " : "",
				long_from ? from : "");
	}
	if (e->nunknown) {
		col = (unsigned int)fprintf(f, "  other flags (not read):");
		for (i = 0; i < e->nunknown; i++) {
			utf8__esc_term(v, sizeof(v), e->unknown[i]);
			if (col + 1 + strlen(v) > 78) {
				fprintf(f, "\n   ");
				col = 3;
			}
			col += (unsigned int)fprintf(f, " %s", v);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
}
