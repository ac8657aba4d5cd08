/* SPDX-License-Identifier: GPL-2.0 */
/* A streaming JSON writer (bpftool's json_writer shape). */
#ifndef __MP_JSON_H
#define __MP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct jsonw;

/* pretty: newlines and 2-space indentation. NULL + errno on failure. */
struct jsonw *jsonw__new(FILE *f, bool pretty);
/* Finishes the output (newline) and frees; NULL-safe. Does not close the FILE. */
void jsonw__free(struct jsonw *w);

void jsonw__start_object(struct jsonw *w);
void jsonw__end_object(struct jsonw *w);
void jsonw__start_array(struct jsonw *w);
void jsonw__end_array(struct jsonw *w);
/* Key of the next value inside an object. */
void jsonw__name(struct jsonw *w, const char *name);

/*
 * Values. Strings are escaped: '"', '\\', every byte < 0x20 (\n \t ... or \u00XX),
 * 0x7f as \u007f, and bytes that are not valid UTF-8 as \ufffd. NULL prints null.
 * Non-finite doubles print null.
 */
void jsonw__string(struct jsonw *w, const char *s);
void jsonw__u64(struct jsonw *w, __u64 v);
void jsonw__s64(struct jsonw *w, __s64 v);
/*
 * The shortest of %.15g/%.16g/%.17g that reads back as v (so no precision is lost),
 * without an exponent from 1e-7 to 1e21; non-finite values print null.
 */
void jsonw__double(struct jsonw *w, double v);
/*
 * v thousandths as a decimal with three digits after the point, from the integer ("%llu.%03llu":
 * 1234567 -> 1234.567): no rounding, so values that add up as integers add up as written.
 */
void jsonw__milli(struct jsonw *w, __u64 v);
void jsonw__bool(struct jsonw *w, bool v);
void jsonw__null(struct jsonw *w);

/* name + value in one call */
void jsonw__string_field(struct jsonw *w, const char *name, const char *s);
void jsonw__u64_field(struct jsonw *w, const char *name, __u64 v);
void jsonw__s64_field(struct jsonw *w, const char *name, __s64 v);
void jsonw__double_field(struct jsonw *w, const char *name, double v);
void jsonw__milli_field(struct jsonw *w, const char *name, __u64 v);
void jsonw__bool_field(struct jsonw *w, const char *name, bool v);
void jsonw__null_field(struct jsonw *w, const char *name);

#endif
