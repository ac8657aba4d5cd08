// SPDX-License-Identifier: GPL-2.0
/* UTF-8: the decoder every output shares, a sanitizer and a terminal escaper. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"

#define UTF8_REPLACEMENT	"\xef\xbf\xbd"	/* U+FFFD */
#define UTF8_ESC_MAX		8		/* "\xc2\x9b": the longest escape */

enum utf8_kind utf8__next(const char *str, size_t n, size_t *len, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c, min;
	size_t l, i;

	*len = 1;
	*cp = s[0];
	if (s[0] < 0x20 || s[0] == 0x7f)
		return UTF8_CONTROL;
	if (s[0] < 0x80)
		return UTF8_TEXT;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		l = 2;
		min = 0x80;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		l = 3;
		min = 0x800;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		l = 4;
		min = 0x10000;
		c = s[0] & 0x07;
	} else {
		return UTF8_INVALID;
	}
	if (l > n)
		return UTF8_INVALID;
	for (i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return UTF8_INVALID;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return UTF8_INVALID;
	*len = l;
	*cp = c;
	return c <= 0x9f ? UTF8_CONTROL : UTF8_TEXT;
}

char *utf8__sanitize(const char *s)
{
	size_t n, i = 0, o = 0, len;
	enum utf8_kind k;
	uint32_t cp;
	char *out;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	n = strlen(s);
	/* a replaced byte grows to 3; a replaced C1 control (2 bytes) too */
	out = malloc(n * 3 + 1);
	if (!out)
		return NULL;
	while (i < n) {
		k = utf8__next(s + i, n - i, &len, &cp);
		if (k == UTF8_TEXT) {
			memcpy(out + o, s + i, len);
			o += len;
		} else {
			memcpy(out + o, UTF8_REPLACEMENT, 3);
			o += 3;
		}
		i += len;
	}
	out[o] = '\0';
	return out;
}

/* the escape of one control or invalid character into e; its length */
static size_t utf8_escape(char *e, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	if (len == 1) {
		switch (s[0]) {
		case '\n':
			return (size_t)snprintf(e, UTF8_ESC_MAX + 1, "\\n");
		case '\t':
			return (size_t)snprintf(e, UTF8_ESC_MAX + 1, "\\t");
		case '\r':
			return (size_t)snprintf(e, UTF8_ESC_MAX + 1, "\\r");
		case '\x1b':
			return (size_t)snprintf(e, UTF8_ESC_MAX + 1, "\\e");
		}
	}
	for (i = 0; i < len; i++) {
		e[o++] = '\\';
		e[o++] = 'x';
		e[o++] = hex[(unsigned char)s[i] >> 4];
		e[o++] = hex[(unsigned char)s[i] & 0xf];
	}
	e[o] = '\0';
	return o;
}

/* one unit of output for the character at s[0..n): *out and its length; *in its bytes */
static size_t utf8_term_unit(const char *s, size_t n, char *esc, const char **out, size_t *in)
{
	uint32_t cp;

	if (utf8__next(s, n, in, &cp) == UTF8_TEXT) {
		*out = s;
		return *in;
	}
	*out = esc;
	return utf8_escape(esc, s, *in);
}

const char *utf8__esc_term(char *buf, size_t len, const char *s)
{
	size_t n, i, o, in, ul, total = 0;
	char esc[UTF8_ESC_MAX + 1];
	const char *u;
	bool cut;

	if (!buf || !len)
		return buf;
	if (!s)
		s = "";
	n = strlen(s);
	for (i = 0; i < n; i += in)
		total += utf8_term_unit(s + i, n - i, esc, &u, &in);
	cut = total > len - 1;
	for (i = o = 0; i < n; i += in) {
		ul = utf8_term_unit(s + i, n - i, esc, &u, &in);
		/* when cut, room is kept for "..." */
		if (o + ul + (cut ? 3 : 0) > len - 1)
			break;
		memcpy(buf + o, u, ul);
		o += ul;
	}
	if (cut) {
		for (i = 0; i < 3 && o < len - 1; i++)
			buf[o++] = '.';
	}
	buf[o] = '\0';
	return buf;
}
