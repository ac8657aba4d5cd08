/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny protocol-buffers writer: varint, length-delimited (bytes, strings, nested messages,
 * packed repeated varints) fields into a growing buffer, and the buffer gzipped to a FILE.
 * Enough for pprof's profile.proto; no schema, no reading. Errors are sticky: after an
 * allocation fails every call does nothing and pbw__err() says -ENOMEM.
 *
 * Nested messages and packed fields: pbw__begin() writes the tag and returns a mark,
 * pbw__end(mark) writes the length in front of what came since (moving it by the length's
 * size), so the encoding is canonical.
 */
#ifndef __MP_PBWRITER_H
#define __MP_PBWRITER_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct pbw {
	unsigned char *buf;
	size_t len, cap;
	int err;		/* 0 or -ENOMEM */
};

void pbw__init(struct pbw *b);
void pbw__free(struct pbw *b);
static inline int pbw__err(const struct pbw *b)
{
	return b->err;
}

/* A bare varint (inside a packed field). */
void pbw__varint(struct pbw *b, __u64 v);
/* Field `field` as a varint (int64 values as their two's complement); 0 is still written. */
void pbw__uint(struct pbw *b, unsigned int field, __u64 v);
/* Field `field` as length-delimited bytes. */
void pbw__bytes(struct pbw *b, unsigned int field, const void *p, size_t n);
void pbw__string(struct pbw *b, unsigned int field, const char *s);
/* Starts a nested message (or packed field) `field`; the mark for pbw__end(). */
size_t pbw__begin(struct pbw *b, unsigned int field);
void pbw__end(struct pbw *b, size_t mark);
/* The buffer as one gzip member to f. 0, -ENOMEM or -EIO. */
int pbw__write_gzip(const struct pbw *b, FILE *f);

#endif
