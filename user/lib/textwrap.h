/* SPDX-License-Identifier: GPL-2.0 */
/* Text for an 80-column terminal: words wrapped at TEXTWRAP_COLS, counted in characters. */
#ifndef __MP_TEXTWRAP_H
#define __MP_TEXTWRAP_H

#include <stdio.h>

#define TEXTWRAP_COLS	79	/* the last column used: a line never reaches the 80th */

/*
 * Prints text's words (runs of non-spaces) wrapped at TEXTWRAP_COLS: the first line goes on
 * from column col (what the caller printed on it already; a first word that does not fit
 * there starts the next line), each next line starts with indent spaces; a word longer
 * than a line stands alone on its own. Ends with a newline.
 */
void textwrap__print(FILE *f, int col, int indent, const char *text);
/* textwrap__print() of the printf-formatted text (cut at 4 KiB). */
void textwrap__printf(FILE *f, int col, int indent, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Each line of text (newline-separated) through textwrap__print(): a line's next lines are
 * indented two spaces more than its own leading spaces.
 */
void textwrap__lines(FILE *f, const char *text);
/* Characters (UTF-8 sequences) in s[0..n). */
int textwrap__width(const char *s, size_t n);

#endif
