// SPDX-License-Identifier: GPL-2.0
/* The shared UTF-8 decoder, the sanitizer and the terminal escaper. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/utf8.h"

struct next_case {
	const char *s;
	size_t n;
	enum utf8_kind kind;
	size_t len;
	uint32_t cp;
};

TEST(utf8_next_classifies)
{
	static const struct next_case cases[] = {
		{ "a", 1, UTF8_TEXT, 1, 'a' },
		{ "\n", 1, UTF8_CONTROL, 1, '\n' },
		{ "\x1b", 1, UTF8_CONTROL, 1, 0x1b },
		{ "\x7f", 1, UTF8_CONTROL, 1, 0x7f },
		{ "\xc2\x80", 2, UTF8_CONTROL, 2, 0x80 },	/* C1 */
		{ "\xc2\x9f", 2, UTF8_CONTROL, 2, 0x9f },
		{ "\xc2\xa0", 2, UTF8_TEXT, 2, 0xa0 },
		{ "\xc3\xa9", 2, UTF8_TEXT, 2, 0xe9 },		/* é */
		{ "\xe2\x82\xac", 3, UTF8_TEXT, 3, 0x20ac },	/* € */
		{ "\xf0\x9f\x98\x80", 4, UTF8_TEXT, 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, UTF8_TEXT, 4, 0x10ffff },
		{ "\xff", 1, UTF8_INVALID, 1, 0xff },
		{ "\x80", 1, UTF8_INVALID, 1, 0x80 },		/* a lone continuation */
		{ "\xc0\x80", 2, UTF8_INVALID, 1, 0xc0 },	/* overlong NUL */
		{ "\xe0\x80\x80", 3, UTF8_INVALID, 1, 0xe0 },	/* overlong */
		{ "\xf0\x80\x80\x80", 4, UTF8_INVALID, 1, 0xf0 },
		{ "\xed\xa0\x80", 3, UTF8_INVALID, 1, 0xed },	/* surrogate */
		{ "\xf4\x90\x80\x80", 4, UTF8_INVALID, 1, 0xf4 },	/* > U+10FFFF */
		{ "\xe2\x82\xac", 2, UTF8_INVALID, 1, 0xe2 },	/* cut by n */
		{ "\xc3(", 2, UTF8_INVALID, 1, 0xc3 },		/* no continuation */
	};
	size_t i, len;
	uint32_t cp;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct next_case *c = &cases[i];
		enum utf8_kind k = utf8__next(c->s, c->n, &len, &cp);

		if (!ASSERT_EQ(k, c->kind, "kind") || !ASSERT_EQ(len, c->len, "len") ||
		    !ASSERT_EQ(cp, c->cp, "cp")) {
			printf("  case %zu\n", i);
			return;
		}
	}
}

TEST(utf8_sanitize_replaces_controls_and_invalid_bytes)
{
	char *s = utf8__sanitize("a\x1b]0;\xff\xc2\x85\xc3\xa9\x7f\n\xe2\x82");

	if (!ASSERT_OK_PTR(s, "sanitize"))
		return;
	ASSERT_STREQ(s, "a\xef\xbf\xbd]0;\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd"
		     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "replaced");
	free(s);
	s = utf8__sanitize("");
	ASSERT_STREQ(s, "", "empty");
	free(s);
	errno = 0;
	ASSERT_NULL(utf8__sanitize(NULL), "NULL");
	ASSERT_EQ(errno, EINVAL, "errno");
}

TEST(utf8_esc_term_escapes)
{
	char buf[128];

	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "\x1b]0;PWNED\x07"), "\\e]0;PWNED\\x07",
		     "title sequence");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "a\nb\tc\rd"), "a\\nb\\tc\\rd", "n t r");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "\x7f\x01"), "\\x7f\\x01", "DEL, SOH");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "x\xc2\x9b" "31m"), "x\\xc2\\x9b31m",
		     "C1 CSI");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "\xff\xc3\xa9\xe2\x82"),
		     "\\xff\xc3\xa9\\xe2\\x82", "invalid bytes, é kept");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), "llama-cli \xe2\x82\xac"),
		     "llama-cli \xe2\x82\xac", "clean text");
	ASSERT_STREQ(utf8__esc_term(buf, sizeof(buf), NULL), "", "NULL");
	ASSERT_TRUE(utf8__esc_term(buf, 0, "x") == buf, "len 0 returns buf");
}

TEST(utf8_esc_term_cuts_whole_units)
{
	char buf[64];

	/* fits exactly: no "..." */
	ASSERT_STREQ(utf8__esc_term(buf, 6, "abcde"), "abcde", "exact");
	ASSERT_STREQ(utf8__esc_term(buf, 6, "abcdef"), "ab...", "cut");
	/* an escape is never split: "\e" needs 2, only 1 is left before "..." */
	ASSERT_STREQ(utf8__esc_term(buf, 7, "abc\x1b" "defgh"), "abc...", "escape kept whole");
	ASSERT_STREQ(utf8__esc_term(buf, 9, "abc\x1b" "defgh"), "abc\\e...", "escape fits");
	ASSERT_STREQ(utf8__esc_term(buf, 8, "a\xff" "bcdefgh"), "a...", "\\xNN kept whole");
	/* a UTF-8 sequence is never split */
	ASSERT_STREQ(utf8__esc_term(buf, 7, "ab\xe2\x82\xac" "cdef"), "ab...", "euro kept whole");
	ASSERT_STREQ(utf8__esc_term(buf, 9, "ab\xe2\x82\xac" "cdef"), "ab\xe2\x82\xac...",
		     "euro fits");
	/* tiny buffers */
	ASSERT_STREQ(utf8__esc_term(buf, 1, "abc"), "", "len 1");
	ASSERT_STREQ(utf8__esc_term(buf, 3, "abc"), "..", "len 3");
	ASSERT_STREQ(utf8__esc_term(buf, 4, "abc"), "abc", "len 4 fits");
	ASSERT_STREQ(utf8__esc_term(buf, 4, "abcd"), "...", "len 4 cut");
	/* the result always fits */
	memset(buf, 'Z', sizeof(buf));
	utf8__esc_term(buf, 10, "\x01\x02\x03\x04\x05\x06");
	ASSERT_LE(strlen(buf), 9U, "fits");
	ASSERT_EQ(buf[10], 'Z', "nothing written past len");
}
