// SPDX-License-Identifier: GPL-2.0
/* Parsing of --phase NAME=[BINARY:]SYMBOL. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/phasespec.h"

#define PHASESPEC_FORM	"expected NAME=[BINARY:]SYMBOL"
#define PHASESPEC_QUOTE	64	/* longer specs are shortened in messages */

static void phasespec__err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* spec as quoted in messages: long paths are cut so that the reason stays readable */
static const char *phasespec__short(const char *spec, char *buf, size_t len)
{
	if (strlen(spec) < PHASESPEC_QUOTE)
		return spec;
	snprintf(buf, len, "%.*s...", PHASESPEC_QUOTE - 4, spec);
	return buf;
}

static int phasespec__name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

int phasespec__valid_name(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return 0;
	for (i = 0; name[i]; i++) {
		if (i >= PHASE_NAME_MAX - 1 || !phasespec__name_char(name[i]))
			return 0;
	}
	return 1;
}

/*
 * Position of the BINARY:SYMBOL separator in s, or NULL. In a run of colons, pairs
 * belong to C++ "::"; a run of odd length ends a binary at its first colon
 * ("lib.so:ns::f", "lib.so:::f" -> "::f").
 */
static const char *phasespec__find_sep(const char *s)
{
	const char *p = s, *run;

	while ((p = strchr(p, ':'))) {
		run = p;
		while (*p == ':')
			p++;
		if ((p - run) % 2)
			return run;
	}
	return NULL;
}

static int phasespec__has_ctrl(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	}
	return 0;
}

int phasespec__parse(const char *spec, struct phase_spec *out, char *err, size_t errlen)
{
	const char *eq, *rest, *sep, *sym, *q;
	char qbuf[PHASESPEC_QUOTE];
	size_t nlen, blen = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!spec) {
		phasespec__err(err, errlen, "bad --phase: no argument");
		goto fail;
	}
	if (!spec[0]) {
		phasespec__err(err, errlen, "bad --phase '': empty (" PHASESPEC_FORM ")");
		goto fail;
	}
	/* before quoting the spec: a newline must not split the message */
	if (phasespec__has_ctrl(spec)) {
		phasespec__err(err, errlen, "bad --phase: control character in the argument");
		goto fail;
	}

	q = phasespec__short(spec, qbuf, sizeof(qbuf));
	eq = strchr(spec, '=');
	if (!eq) {
		phasespec__err(err, errlen, "bad --phase '%s': missing '=' (%s)", q,
			       PHASESPEC_FORM);
		goto fail;
	}
	nlen = eq - spec;
	if (!nlen) {
		phasespec__err(err, errlen, "bad --phase '%s': empty phase name (%s)", q,
			       PHASESPEC_FORM);
		goto fail;
	}
	if (nlen > PHASE_NAME_MAX - 1) {
		phasespec__err(err, errlen, "phase name '%.*s...' is too long (max %d characters)",
			       PHASE_NAME_MAX - 1, spec, PHASE_NAME_MAX - 1);
		goto fail;
	}
	memcpy(out->name, spec, nlen);
	out->name[nlen] = '\0';
	if (!phasespec__valid_name(out->name)) {
		phasespec__err(err, errlen, "phase name '%s' has invalid characters (%s)",
			       out->name, "allowed: A-Z a-z 0-9 _ . -");
		goto fail;
	}

	rest = eq + 1;
	sep = phasespec__find_sep(rest);
	sym = sep ? sep + 1 : rest;
	if (sep) {
		blen = sep - rest;
		if (!blen) {
			phasespec__err(err, errlen, "bad --phase '%s': empty binary before ':'", q);
			goto fail;
		}
		if (blen > PHASE_BIN_MAX - 1) {
			phasespec__err(err, errlen,
				       "bad --phase '%s': binary path is too long (max %d)", q,
				       PHASE_BIN_MAX - 1);
			goto fail;
		}
	}
	if (!sym[0]) {
		phasespec__err(err, errlen, "bad --phase '%s': empty symbol", q);
		goto fail;
	}
	if (strlen(sym) > PHASE_SYM_MAX - 1) {
		phasespec__err(err, errlen, "bad --phase '%s': symbol is too long (max %d)", q,
			       PHASE_SYM_MAX - 1);
		goto fail;
	}
	if (phasespec__find_sep(sym)) {
		phasespec__err(err, errlen, "bad --phase '%s': stray ':' in symbol '%s'", q, sym);
		goto fail;
	}

	memcpy(out->binary, rest, blen);
	out->binary[blen] = '\0';
	strcpy(out->symbol, sym);
	return 0;

fail:
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}
