// SPDX-License-Identifier: GPL-2.0
/* The streaming JSON writer: layout, escaping, numbers; output checked by a tiny parser. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/json.h"

/* --- a minimal JSON checker (RFC 8259 grammar), independent of the writer --- */

static const char *chk_value(const char *p, int depth);

static const char *chk_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* a string at p ('"'); decoded (\u escapes to UTF-8) into out if not NULL */
static const char *chk_string(const char *p, char *out)
{
	unsigned int cp;
	int i, h;

	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;	/* raw control characters (and the NUL) are invalid */
		if (*p != '\\') {
			if (out)
				*out++ = *p;
			p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"': case '\\': case '/':
			cp = *p;
			break;
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			cp = 0;
			for (i = 1; i <= 4; i++) {
				h = hexval(p[i]);
				if (h < 0)
					return NULL;
				cp = cp << 4 | h;
			}
			p += 4;
			break;
		default:
			return NULL;
		}
		p++;
		if (!out)
			continue;
		if (cp < 0x80) {
			*out++ = cp;
		} else if (cp < 0x800) {
			*out++ = 0xc0 | cp >> 6;
			*out++ = 0x80 | (cp & 0x3f);
		} else {
			*out++ = 0xe0 | cp >> 12;
			*out++ = 0x80 | ((cp >> 6) & 0x3f);
			*out++ = 0x80 | (cp & 0x3f);
		}
	}
	if (out)
		*out = '\0';
	return p + 1;
}

static const char *chk_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p;
}

static const char *chk_value(const char *p, int depth)
{
	char close;

	if (depth > 100)
		return NULL;
	p = chk_ws(p);
	if (*p == '"')
		return chk_string(p, NULL);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	if (*p != '{' && *p != '[')
		return chk_number(p);

	close = *p == '{' ? '}' : ']';
	p = chk_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			p = chk_string(chk_ws(p), NULL);
			if (!p)
				return NULL;
			p = chk_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = chk_value(p, depth + 1);
		if (!p)
			return NULL;
		p = chk_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

/* whole text: one or more values separated by whitespace (JSON Lines) */
static bool json_valid(const char *s)
{
	const char *p = chk_ws(s);

	if (!*p)
		return false;
	while (*p) {
		p = chk_value(p, 0);
		if (!p)
			return false;
		/* values are separated by whitespace */
		if (*p && chk_ws(p) == p)
			return false;
		p = chk_ws(p);
	}
	return true;
}

/* --- helpers --- */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
	struct jsonw *w;
};

static bool cap_open(struct capture *c, bool pretty)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	if (!ASSERT_OK_PTR(c->f, "open_memstream"))
		return false;
	c->w = jsonw__new(c->f, pretty);
	if (!ASSERT_OK_PTR(c->w, "jsonw__new")) {
		fclose(c->f);
		free(c->buf);
		return false;
	}
	return true;
}

/* frees the writer and returns the text (owned by c) */
static const char *cap_close(struct capture *c)
{
	jsonw__free(c->w);
	fclose(c->f);
	return c->buf;
}

/* the JSON text of one string value */
static char *json_of_string(const char *s)
{
	struct capture c;

	if (!cap_open(&c, false))
		return NULL;
	jsonw__string(c.w, s);
	cap_close(&c);
	return c.buf;
}

static void write_sample(struct jsonw *w)
{
	jsonw__start_object(w);
	jsonw__u64_field(w, "a", 1);
	jsonw__name(w, "b");
	jsonw__start_array(w);
	jsonw__u64(w, 1);
	jsonw__s64(w, -2);
	jsonw__start_object(w);
	jsonw__bool_field(w, "c", true);
	jsonw__end_object(w);
	jsonw__end_array(w);
	jsonw__name(w, "d");
	jsonw__start_object(w);
	jsonw__end_object(w);
	jsonw__name(w, "e");
	jsonw__start_array(w);
	jsonw__end_array(w);
	jsonw__null_field(w, "f");
	jsonw__string_field(w, "g", "x");
	jsonw__bool_field(w, "h", false);
	jsonw__double_field(w, "i", 0.5);
	jsonw__s64_field(w, "j", -7);
	jsonw__end_object(w);
}

/* --- tests --- */

TEST(json_compact_layout)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	write_sample(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\"a\":1,\"b\":[1,-2,{\"c\":true}],\"d\":{},\"e\":[],\"f\":null,"
		     "\"g\":\"x\",\"h\":false,\"i\":0.5,\"j\":-7}\n", "compact");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);
}

TEST(json_pretty_layout)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, true))
		return;
	write_sample(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out,
		     "{\n"
		     "  \"a\": 1,\n"
		     "  \"b\": [\n"
		     "    1,\n"
		     "    -2,\n"
		     "    {\n"
		     "      \"c\": true\n"
		     "    }\n"
		     "  ],\n"
		     "  \"d\": {},\n"
		     "  \"e\": [],\n"
		     "  \"f\": null,\n"
		     "  \"g\": \"x\",\n"
		     "  \"h\": false,\n"
		     "  \"i\": 0.5,\n"
		     "  \"j\": -7\n"
		     "}\n", "pretty");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);
}

TEST(json_top_level_values)
{
	struct capture c;
	const char *out;

	/* several documents on one writer: one per line */
	if (!cap_open(&c, false))
		return;
	jsonw__start_object(c.w);
	jsonw__u64_field(c.w, "n", 1);
	jsonw__end_object(c.w);
	jsonw__start_object(c.w);
	jsonw__u64_field(c.w, "n", 2);
	jsonw__end_object(c.w);
	jsonw__u64(c.w, 3);
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\"n\":1}\n{\"n\":2}\n3\n", "json lines");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);

	/* nothing written: nothing output, not even the newline */
	if (!cap_open(&c, true))
		return;
	out = cap_close(&c);
	ASSERT_STREQ(out, "", "empty");
	free(c.buf);
}

TEST(json_free_closes_open_containers)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	jsonw__start_object(c.w);
	jsonw__name(c.w, "list");
	jsonw__start_array(c.w);
	jsonw__u64(c.w, 1);
	jsonw__start_object(c.w);
	jsonw__name(c.w, "pending");
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\"list\":[1,{\"pending\":null}]}\n", "auto-closed");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);

	/* NULL-safe */
	jsonw__free(NULL);
	errno = 0;
	ASSERT_NULL(jsonw__new(NULL, false), "jsonw__new(NULL)");
	ASSERT_EQ(errno, EINVAL, "errno");
}

TEST(json_escape_control_chars)
{
	/* the escape of each byte 0x01..0x1f, written out by hand */
	static const char *const esc[0x20] = {
		NULL, "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006",
		"\\u0007", "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f",
		"\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016",
		"\\u0017", "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d",
		"\\u001e", "\\u001f",
	};
	char in[4], want[16], decoded[16];
	char *out;
	int ch;

	for (ch = 1; ch < 0x20; ch++) {
		snprintf(in, sizeof(in), "a%cb", ch);
		snprintf(want, sizeof(want), "\"a%sb\"\n", esc[ch]);
		out = json_of_string(in);
		if (!ASSERT_STREQ(out, want, "control char"))
			printf("byte 0x%02x\n", ch);
		if (out && ASSERT_OK_PTR(chk_string(out, decoded), "parse back"))
			ASSERT_STREQ(decoded, in, "round trip");
		free(out);
	}
}

TEST(json_escape_specials)
{
	char *out;

	out = json_of_string("say \"hi\"");
	ASSERT_STREQ(out, "\"say \\\"hi\\\"\"\n", "quotes");
	free(out);
	out = json_of_string("C:\\dir\\");
	ASSERT_STREQ(out, "\"C:\\\\dir\\\\\"\n", "backslash");
	free(out);
	out = json_of_string("del\x7f");
	ASSERT_STREQ(out, "\"del\\u007f\"\n", "0x7f");
	free(out);
	out = json_of_string("a/b ~{}[]:,");
	ASSERT_STREQ(out, "\"a/b ~{}[]:,\"\n", "printable ASCII as is");
	free(out);
	out = json_of_string("");
	ASSERT_STREQ(out, "\"\"\n", "empty string");
	free(out);
	out = json_of_string(NULL);
	ASSERT_STREQ(out, "null\n", "NULL string");
	free(out);
}

TEST(json_round_trip_ascii)
{
	char in[2] = {}, decoded[16], *out;
	int ch;

	/* every ASCII byte survives writer + independent parser */
	for (ch = 1; ch < 0x80; ch++) {
		in[0] = ch;
		out = json_of_string(in);
		if (!ASSERT_OK_PTR(out, "write"))
			return;
		if (!ASSERT_TRUE(json_valid(out), "valid") ||
		    !ASSERT_OK_PTR(chk_string(out, decoded), "parse") ||
		    !ASSERT_STREQ(decoded, in, "round trip"))
			printf("byte 0x%02x -> %s", ch, out);
		free(out);
	}
}

TEST(json_utf8)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		/* valid sequences pass through */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"\n" },			/* U+00E9 */
		{ "\xe2\x82\xac 5", "\"\xe2\x82\xac 5\"\n" },		/* U+20AC */
		{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"\n" },	/* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"\n" },	/* U+10FFFF */
		{ "\xc2\x80", "\"\xc2\x80\"\n" },			/* U+0080 */
		/* invalid bytes become U+FFFD, one per byte */
		{ "a\x80z", "\"a\\ufffdz\"\n" },			/* lone continuation */
		{ "\xff", "\"\\ufffd\"\n" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"\n" },			/* overlong '/' */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"\n" },	/* overlong, 3 bytes */
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"\n" },			/* truncated at the end */
		{ "\xe2\x82z", "\"\\ufffd\\ufffdz\"\n" },		/* truncated mid-string */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n" },	/* surrogate U+D800 */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n" },	/* > U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"\n" },
		{ "\xc3\xa9\xc3", "\"\xc3\xa9\\ufffd\"\n" },		/* valid, then cut */
	};
	char *out;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = json_of_string(cases[i].in);
		if (!ASSERT_STREQ(out, cases[i].want, "utf-8"))
			printf("case %zu\n", i);
		if (out)
			ASSERT_TRUE(json_valid(out), "valid");
		free(out);
	}
}

TEST(json_integers)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	jsonw__start_array(c.w);
	jsonw__u64(c.w, 0);
	jsonw__u64(c.w, UINT64_MAX);
	jsonw__s64(c.w, -1);
	jsonw__s64(c.w, INT64_MIN);
	jsonw__s64(c.w, INT64_MAX);
	jsonw__end_array(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out, "[0,18446744073709551615,-1,-9223372036854775808,"
		     "9223372036854775807]\n", "integers");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);
}

TEST(json_doubles)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	jsonw__start_array(c.w);
	jsonw__double(c.w, NAN);
	jsonw__double(c.w, INFINITY);
	jsonw__double(c.w, -INFINITY);
	jsonw__double(c.w, 0.0);
	jsonw__double(c.w, -1.25);
	jsonw__double(c.w, 3.14159265358979);
	jsonw__double(c.w, 1e6);
	jsonw__double(c.w, 1.5e-7);
	jsonw__double(c.w, 123456.0);
	jsonw__end_array(c.w);
	out = cap_close(&c);
	/* every digit that tells the double apart, no exponent at ordinary magnitudes */
	ASSERT_STREQ(out, "[null,null,null,0,-1.25,3.14159265358979,1000000,0.00000015,123456]\n",
		     "doubles");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);

	if (!cap_open(&c, true))
		return;
	jsonw__start_object(c.w);
	jsonw__double_field(c.w, "nan", NAN);
	jsonw__end_object(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\n  \"nan\": null\n}\n", "NaN field");
	free(c.buf);
}

/* thousandths from the integer: three digits after the point, always, no rounding */
TEST(json_milli)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	jsonw__start_array(c.w);
	jsonw__milli(c.w, 0);
	jsonw__milli(c.w, 7);
	jsonw__milli(c.w, 364454832);
	jsonw__milli(c.w, 1000);
	jsonw__milli(c.w, UINT64_MAX);
	jsonw__start_object(c.w);
	jsonw__milli_field(c.w, "ts", 125);
	jsonw__end_object(c.w);
	jsonw__end_array(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out, "[0.000,0.007,364454.832,1.000,18446744073709551.615,{\"ts\":0.125}]\n",
		     "milli");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);
}

/* each double is written with the digits that read back as the same double */
TEST(json_doubles_round_trip)
{
	static const struct {
		double v;
		const char *want;	/* NULL: only the read-back is checked */
	} cases[] = {
		{ 123456789.123, "123456789.123" },
		{ 0.1, "0.1" },
		{ 1e-7, "0.0000001" },
		{ 9007199254740993.0, "9007199254740992" },	/* 2^53 + 1 rounds to 2^53 */
		{ 9007199254740994.0, "9007199254740994" },	/* 2^53 + 2 */
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ -2.5e-3, "-0.0025" },
		{ 1e20, "100000000000000000000" },
		{ 1e21, "1e+21" },
		{ 1.5e-8, "1.5e-08" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 4.9406564584124654e-324, NULL },
		{ 2.2250738585072014e-308, NULL },
		{ 6.02214076e23, NULL },
		{ 3.14159265358979323846, NULL },
	};
	struct capture c;
	const char *out, *p;
	char *end;
	size_t i;
	double got;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!cap_open(&c, false))
			return;
		jsonw__double(c.w, cases[i].v);
		out = cap_close(&c);
		if (!ASSERT_TRUE(json_valid(out), "valid")) {
			printf("case %zu: %s", i, out);
			free(c.buf);
			continue;
		}
		got = strtod(out, &end);
		if (!ASSERT_TRUE(end != out && *end == '\n' && got == cases[i].v, "reads back"))
			printf("case %zu: %.17g written as %s", i, cases[i].v, out);
		if (cases[i].want && !ASSERT_TRUE(end != out && strlen(cases[i].want) ==
						   (size_t)(end - out) &&
						   !strncmp(out, cases[i].want, end - out), "text"))
			printf("case %zu: want %s, got %s", i, cases[i].want, out);
		for (p = out; *p; p++)
			if (*p == ',')
				ASSERT_TRUE(false, "no decimal comma");
		free(c.buf);
	}
}

TEST(json_names_escaped)
{
	struct capture c;
	const char *out;

	if (!cap_open(&c, false))
		return;
	jsonw__start_object(c.w);
	jsonw__u64_field(c.w, "a\"b\n", 1);
	jsonw__u64_field(c.w, NULL, 2);
	jsonw__end_object(c.w);
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\"a\\\"b\\n\":1,\"\":2}\n", "names");
	ASSERT_TRUE(json_valid(out), "valid");
	free(c.buf);
}

TEST(json_checker_self_test)
{
	/* the checker must reject what the writer must never produce */
	ASSERT_FALSE(json_valid("nan"), "nan");
	ASSERT_FALSE(json_valid("[1,]"), "trailing comma");
	ASSERT_FALSE(json_valid("{\"a\" 1}"), "missing colon");
	ASSERT_FALSE(json_valid("\"a\tb\""), "raw tab");
	ASSERT_FALSE(json_valid("\"\\x41\""), "bad escape");
	ASSERT_FALSE(json_valid("[1 2]"), "missing comma");
	ASSERT_FALSE(json_valid("01"), "leading zero");
	ASSERT_FALSE(json_valid(""), "empty");
	ASSERT_TRUE(json_valid("{\"a\": [1, -2.5e+3, \"\\u00e9\", {}]}"), "valid sample");
}
