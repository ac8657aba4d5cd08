// SPDX-License-Identifier: GPL-2.0
/* --phase NAME=[BINARY:]SYMBOL parsing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "lib/phasespec.h"

static struct phase_spec ps;
static char err[256];

static bool parses(const char *spec, const char *name, const char *binary, const char *symbol)
{
	bool ok;

	memset(&ps, 0x55, sizeof(ps));
	ok = ASSERT_OK(phasespec__parse(spec, &ps, err, sizeof(err)), spec);
	ok = ok && ASSERT_STREQ(err, "", "no error message");
	ok = ok && ASSERT_STREQ(ps.name, name, "name");
	ok = ok && ASSERT_STREQ(ps.binary, binary, "binary");
	ok = ok && ASSERT_STREQ(ps.symbol, symbol, "symbol");
	if (!ok)
		printf("spec '%s'\n", spec);
	return ok;
}

static bool fails(const char *spec, const char *msg)
{
	bool ok;

	memset(err, 'x', sizeof(err) - 1);
	err[sizeof(err) - 1] = '\0';
	ok = ASSERT_EQ(phasespec__parse(spec, &ps, err, sizeof(err)), -EINVAL, "-EINVAL");
	ok = ok && ASSERT_STREQ(err, msg, "message");
	ok = ok && ASSERT_TRUE(!strchr(err, '\n'), "one line");
	ok = ok && ASSERT_STREQ(ps.name, "", "name cleared");
	if (!ok)
		printf("spec '%s'\n", spec ? spec : "(null)");
	return ok;
}

TEST(phasespec_valid)
{
	parses("load=llama_model_load", "load", "", "llama_model_load");
	parses("decode=/usr/lib/libllama.so:llama_decode", "decode", "/usr/lib/libllama.so",
	       "llama_decode");
	parses("a=libllama.so:f", "a", "libllama.so", "f");
	parses("Phase_1.x-y=f", "Phase_1.x-y", "", "f");
	parses("n=f=g", "n", "", "f=g");	/* only the first '=' separates */
}

TEST(phasespec_cxx)
{
	parses("init=ns::f", "init", "", "ns::f");
	parses("init=a::b::c", "init", "", "a::b::c");
	parses("init=/path/lib.so:ns::f", "init", "/path/lib.so", "ns::f");
	parses("init=lib.so:a::b::c", "init", "lib.so", "a::b::c");
	/* a global-scope "::f" after the binary: the odd colon of ":::" is the separator */
	parses("init=lib.so:::f", "init", "lib.so", "::f");
	parses("init=::f", "init", "", "::f");
}

TEST(phasespec_limits)
{
	char spec[PHASE_BIN_MAX + PHASE_SYM_MAX + 64], name[PHASE_NAME_MAX + 1];
	char want[128];

	/* 31 characters is the longest name */
	memset(name, 'n', PHASE_NAME_MAX - 1);
	name[PHASE_NAME_MAX - 1] = '\0';
	snprintf(spec, sizeof(spec), "%s=f", name);
	parses(spec, name, "", "f");

	name[PHASE_NAME_MAX - 1] = 'n';
	name[PHASE_NAME_MAX] = '\0';
	snprintf(spec, sizeof(spec), "%s=f", name);
	snprintf(want, sizeof(want), "phase name '%.31s...' is too long (max 31 characters)", name);
	fails(spec, want);

	/* 255-character symbol fits, 256 does not */
	strcpy(spec, "p=");
	memset(spec + 2, 's', PHASE_SYM_MAX - 1);
	spec[2 + PHASE_SYM_MAX - 1] = '\0';
	if (parses(spec, "p", "", spec + 2))
		ASSERT_EQ(strlen(ps.symbol), PHASE_SYM_MAX - 1, "symbol length");
	strcat(spec, "s");
	memset(&ps, 0, sizeof(ps));
	ASSERT_EQ(phasespec__parse(spec, &ps, err, sizeof(err)), -EINVAL, "long symbol");
	/* the spec is quoted cut to 60 characters + "..." */
	ASSERT_STREQ(err, "bad --phase 'p=ssssssssssssssssssssssssssssssssssssssssssssssssssssss"
		     "ssss...': symbol is too long (max 255)", "long symbol message");

	/* 4095-character binary fits, 4096 does not */
	strcpy(spec, "p=");
	memset(spec + 2, 'b', PHASE_BIN_MAX - 1);
	strcpy(spec + 2 + PHASE_BIN_MAX - 1, ":f");
	if (ASSERT_OK(phasespec__parse(spec, &ps, err, sizeof(err)), "4095-byte binary"))
		ASSERT_EQ(strlen(ps.binary), PHASE_BIN_MAX - 1, "binary length");
	memset(spec + 2, 'b', PHASE_BIN_MAX);
	strcpy(spec + 2 + PHASE_BIN_MAX, ":f");
	ASSERT_EQ(phasespec__parse(spec, &ps, err, sizeof(err)), -EINVAL, "long binary");
	ASSERT_TRUE(strstr(err, "...': binary path is too long (max 4095)") != NULL,
		    "long binary message");
	ASSERT_LE(strlen(err), 120, "short message");

	/* a small error buffer is truncated, never overrun */
	memset(err, 'x', sizeof(err));
	ASSERT_EQ(phasespec__parse("nope", &ps, err, 8), -EINVAL, "small buffer");
	ASSERT_STREQ(err, "bad --p", "truncated");
	ASSERT_EQ(err[8], 'x', "no overrun");
	ASSERT_EQ(phasespec__parse("nope", &ps, NULL, 0), -EINVAL, "no buffer");
}

TEST(phasespec_errors)
{
	fails("x", "bad --phase 'x': missing '=' (expected NAME=[BINARY:]SYMBOL)");
	fails("", "bad --phase '': empty (expected NAME=[BINARY:]SYMBOL)");
	fails("=f", "bad --phase '=f': empty phase name (expected NAME=[BINARY:]SYMBOL)");
	fails("a b=f", "phase name 'a b' has invalid characters (allowed: A-Z a-z 0-9 _ . -)");
	fails("a/b=f", "phase name 'a/b' has invalid characters (allowed: A-Z a-z 0-9 _ . -)");
	fails("a:b=f", "phase name 'a:b' has invalid characters (allowed: A-Z a-z 0-9 _ . -)");
	fails("a=", "bad --phase 'a=': empty symbol");
	fails("a=/lib.so:", "bad --phase 'a=/lib.so:': empty symbol");
	fails("a=:f", "bad --phase 'a=:f': empty binary before ':'");
	fails("a=lib.so:x:y", "bad --phase 'a=lib.so:x:y': stray ':' in symbol 'x:y'");
	fails("a=f\tg", "bad --phase: control character in the argument");
	fails("a=f\ng", "bad --phase: control character in the argument");
	fails(NULL, "bad --phase: no argument");
	ASSERT_EQ(phasespec__parse("a=f", NULL, err, sizeof(err)), -EINVAL, "NULL out");
}

TEST(phasespec_valid_name)
{
	char name[40];

	ASSERT_EQ(phasespec__valid_name("load"), 1, "load");
	ASSERT_EQ(phasespec__valid_name("A-Z_a.z-09"), 1, "all classes");
	ASSERT_EQ(phasespec__valid_name(""), 0, "empty");
	ASSERT_EQ(phasespec__valid_name(NULL), 0, "NULL");
	ASSERT_EQ(phasespec__valid_name("a b"), 0, "space");
	ASSERT_EQ(phasespec__valid_name("a=b"), 0, "=");
	ASSERT_EQ(phasespec__valid_name("caf\xc3\xa9"), 0, "non-ASCII");
	memset(name, 'a', 31);
	name[31] = '\0';
	ASSERT_EQ(phasespec__valid_name(name), 1, "31 chars");
	name[31] = 'a';
	name[32] = '\0';
	ASSERT_EQ(phasespec__valid_name(name), 0, "32 chars");
}
