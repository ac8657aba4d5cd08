// SPDX-License-Identifier: GPL-2.0
/*
 * A streaming JSON writer. Commas, newlines and indentation are inserted by the writer:
 * callers only say what comes next. Compact output has no whitespace at all; pretty
 * output puts every member and element on its own line, indented by 2 spaces per level
 * (empty containers stay "{}" and "[]"). Several top-level values are separated by a
 * newline (JSON Lines).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/utf8.h"

#define JSONW_MAX_STACK	64	/* levels remembered for auto-closing in jsonw__free() */

struct jsonw {
	FILE *out;
	bool pretty;
	bool first;		/* nothing written yet in the current container */
	bool after_name;	/* a name was written: the value follows without separator */
	unsigned int depth;
	char stack[JSONW_MAX_STACK];	/* closing char of each open container */
};

struct jsonw *jsonw__new(FILE *f, bool pretty)
{
	struct jsonw *w;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out = f;
	w->pretty = pretty;
	w->first = true;
	return w;
}

static void jsonw__indent(struct jsonw *w)
{
	unsigned int i;

	putc('\n', w->out);
	for (i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/* separator and indentation before a name or a value */
static void jsonw__sep(struct jsonw *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (w->depth == 0) {
		if (!w->first)
			putc('\n', w->out);
	} else {
		if (!w->first)
			putc(',', w->out);
		if (w->pretty)
			jsonw__indent(w);
	}
	w->first = false;
}

static void jsonw__begin(struct jsonw *w, char open, char close)
{
	jsonw__sep(w);
	putc(open, w->out);
	if (w->depth < JSONW_MAX_STACK)
		w->stack[w->depth] = close;
	w->depth++;
	w->first = true;
}

static void jsonw__end(struct jsonw *w, char close)
{
	if (!w->depth)
		return;
	w->depth--;
	if (w->pretty && !w->first)
		jsonw__indent(w);
	putc(close, w->out);
	w->first = false;
	w->after_name = false;
}

void jsonw__free(struct jsonw *w)
{
	if (!w)
		return;
	/* a name without its value (an error path): complete the member */
	if (w->after_name)
		fputs("null", w->out);
	w->after_name = false;
	while (w->depth)
		jsonw__end(w, w->depth <= JSONW_MAX_STACK ? w->stack[w->depth - 1] : '}');
	if (!w->first)
		putc('\n', w->out);
	fflush(w->out);
	free(w);
}

void jsonw__start_object(struct jsonw *w)
{
	jsonw__begin(w, '{', '}');
}

void jsonw__end_object(struct jsonw *w)
{
	jsonw__end(w, '}');
}

void jsonw__start_array(struct jsonw *w)
{
	jsonw__begin(w, '[', ']');
}

void jsonw__end_array(struct jsonw *w)
{
	jsonw__end(w, ']');
}

static void jsonw__puts(struct jsonw *w, const char *s)
{
	size_t n = strlen(s), i = 0, len;
	FILE *f = w->out;
	enum utf8_kind k;
	uint32_t cp;

	putc('"', f);
	while (i < n) {
		k = utf8__next(s + i, n - i, &len, &cp);
		if (k == UTF8_INVALID) {
			fputs("\\ufffd", f);
		} else if (len > 1) {
			/* C1 controls are valid in a JSON string: they pass as UTF-8 */
			fwrite(s + i, 1, len, f);
		} else {
			switch (cp) {
			case '"':
				fputs("\\\"", f);
				break;
			case '\\':
				fputs("\\\\", f);
				break;
			case '\b':
				fputs("\\b", f);
				break;
			case '\f':
				fputs("\\f", f);
				break;
			case '\n':
				fputs("\\n", f);
				break;
			case '\r':
				fputs("\\r", f);
				break;
			case '\t':
				fputs("\\t", f);
				break;
			default:
				if (k == UTF8_CONTROL)
					fprintf(f, "\\u%04x", cp);
				else
					putc(cp, f);
			}
		}
		i += len;
	}
	putc('"', f);
}

void jsonw__name(struct jsonw *w, const char *name)
{
	jsonw__sep(w);
	jsonw__puts(w, name ? name : "");
	putc(':', w->out);
	if (w->pretty)
		putc(' ', w->out);
	w->after_name = true;
}

void jsonw__string(struct jsonw *w, const char *s)
{
	if (!s) {
		jsonw__null(w);
		return;
	}
	jsonw__sep(w);
	jsonw__puts(w, s);
}

void jsonw__u64(struct jsonw *w, __u64 v)
{
	jsonw__sep(w);
	fprintf(w->out, "%llu", (unsigned long long)v);
}

void jsonw__s64(struct jsonw *w, __s64 v)
{
	jsonw__sep(w);
	fprintf(w->out, "%lld", (long long)v);
}

/*
 * "d.ddde[+-]X" (what %g printed, '.' or the locale's comma) rewritten without the
 * exponent: 1e-07 -> 0.0000001, 1.5e+17 -> 150000000000000000.
 */
static void json_fixed(char *buf, size_t len)
{
	char digits[32], out[64], *p = buf;
	int n = 0, x, pos, i, k = 0;
	bool neg = *p == '-';

	if (neg)
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && n < (int)sizeof(digits))
			digits[n++] = *p;
	if (*p != 'e' || !n)
		return;
	x = atoi(p + 1);
	/* the value is 0.DIGITS times 10^pos */
	pos = x + 1;
	if (neg)
		out[k++] = '-';
	if (pos <= 0) {
		out[k++] = '0';
		out[k++] = '.';
		for (i = pos; i < 0; i++)
			out[k++] = '0';
		for (i = 0; i < n; i++)
			out[k++] = digits[i];
	} else {
		for (i = 0; i < n || i < pos; i++) {
			if (i == pos)
				out[k++] = '.';
			out[k++] = i < n ? digits[i] : '0';
		}
	}
	out[k] = '\0';
	snprintf(buf, len, "%s", out);
}

void jsonw__double(struct jsonw *w, double v)
{
	char buf[64], *p, *e;
	int prec;

	if (!isfinite(v)) {
		jsonw__null(w);
		return;
	}
	/* the fewest significant digits that read back as the same double (17 always do) */
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (prec == 17 || strtod(buf, NULL) == v)
			break;
	}
	/* no exponent for ordinary magnitudes: 1e-07 and 1e+20 as plain digits */
	e = strchr(buf, 'e');
	if (e && atoi(e + 1) >= -7 && atoi(e + 1) <= 20)
		json_fixed(buf, sizeof(buf));
	/* a locale with a decimal comma must not break the JSON */
	for (p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
	jsonw__sep(w);
	fputs(buf, w->out);
}

void jsonw__milli(struct jsonw *w, __u64 v)
{
	jsonw__sep(w);
	fprintf(w->out, "%llu.%03llu", (unsigned long long)(v / 1000),
		(unsigned long long)(v % 1000));
}

void jsonw__bool(struct jsonw *w, bool v)
{
	jsonw__sep(w);
	fputs(v ? "true" : "false", w->out);
}

void jsonw__null(struct jsonw *w)
{
	jsonw__sep(w);
	fputs("null", w->out);
}

void jsonw__string_field(struct jsonw *w, const char *name, const char *s)
{
	jsonw__name(w, name);
	jsonw__string(w, s);
}

void jsonw__u64_field(struct jsonw *w, const char *name, __u64 v)
{
	jsonw__name(w, name);
	jsonw__u64(w, v);
}

void jsonw__s64_field(struct jsonw *w, const char *name, __s64 v)
{
	jsonw__name(w, name);
	jsonw__s64(w, v);
}

void jsonw__double_field(struct jsonw *w, const char *name, double v)
{
	jsonw__name(w, name);
	jsonw__double(w, v);
}

void jsonw__milli_field(struct jsonw *w, const char *name, __u64 v)
{
	jsonw__name(w, name);
	jsonw__milli(w, v);
}

void jsonw__bool_field(struct jsonw *w, const char *name, bool v)
{
	jsonw__name(w, name);
	jsonw__bool(w, v);
}

void jsonw__null_field(struct jsonw *w, const char *name)
{
	jsonw__name(w, name);
	jsonw__null(w);
}
