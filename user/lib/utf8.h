/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 for every output: one decoder (RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF) and what each output does with text that is not clean.
 *
 * A "control" is a C0 control (U+0000..U+001F), DEL (U+007F) or a C1 control
 * (U+0080..U+009F, two bytes in UTF-8). An "invalid" byte is one that does not start a
 * valid sequence; decoding goes on at the next byte.
 */
#ifndef __MP_UTF8_H
#define __MP_UTF8_H

#include <stddef.h>
#include <stdint.h>

enum utf8_kind {
	UTF8_TEXT,	/* a printable character */
	UTF8_CONTROL,	/* C0, DEL or C1 */
	UTF8_INVALID,	/* one byte that is not valid UTF-8 */
};

/*
 * The character at s[0..n), n > 0: its kind, its length in *len (1 for an invalid byte)
 * and its code point in *cp (the byte's value for an invalid byte). Never reads s[n].
 */
enum utf8_kind utf8__next(const char *s, size_t n, size_t *len, uint32_t *cp);

/*
 * s with every control and every invalid byte replaced by U+FFFD, malloc'd (free() it);
 * the result is valid UTF-8 without controls. NULL + errno (ENOMEM, or EINVAL for s NULL).
 */
char *utf8__sanitize(const char *s);

/*
 * s rendered for a terminal into buf[0..len): printable UTF-8 passes through; controls and
 * invalid bytes become visible escapes: \n \t \r, \e for ESC, otherwise \xNN per byte (a C1
 * control is two: "\xc2\x9b"). The result always fits (NUL-terminated); when s does not,
 * it is cut before a character or an escape and ends with "..." (or as much of "..." as
 * len leaves room for). s NULL renders as "". Returns buf.
 */
const char *utf8__esc_term(char *buf, size_t len, const char *s);

#endif
