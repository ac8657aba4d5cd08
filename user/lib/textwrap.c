// SPDX-License-Identifier: GPL-2.0
/* Words wrapped at 80 columns (see textwrap.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include "lib/textwrap.h"

int textwrap__width(const char *s, size_t n)
{
	int w = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

void textwrap__print(FILE *f, int col, int indent, const char *text)
{
	const char *s = text;
	bool first = true;
	size_t len;
	int w;

	while (*s) {
		while (*s == ' ')
			s++;
		for (len = 0; s[len] && s[len] != ' '; len++)
			;
		if (!len)
			break;
		w = textwrap__width(s, len);
		/* a first word that does not fit where the caller left off starts the next line */
		if (col + !first + w > TEXTWRAP_COLS && (!first || col > indent)) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, len, f);
		col += w;
		first = false;
		s += len;
	}
	fputc('\n', f);
}

void textwrap__printf(FILE *f, int col, int indent, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	textwrap__print(f, col, indent, buf);
}

void textwrap__lines(FILE *f, const char *text)
{
	const char *line = text, *nl;
	char buf[4096];
	size_t len, lead;

	while (line && *line) {
		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		lead = strspn(line, " ");
		if (lead > len)
			lead = len;
		snprintf(buf, sizeof(buf), "%.*s", (int)(len - lead), line + lead);
		fprintf(f, "%*s", (int)lead, "");
		textwrap__print(f, (int)lead, (int)lead + 2, buf);
		line = nl ? nl + 1 : NULL;
	}
}
