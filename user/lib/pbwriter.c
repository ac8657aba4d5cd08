// SPDX-License-Identifier: GPL-2.0
/* A tiny protocol-buffers writer (see pbwriter.h), and gzip through zlib. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "lib/pbwriter.h"
#include "lib/util.h"

#define WIRE_VARINT	0
#define WIRE_LEN	2

void pbw__init(struct pbw *b)
{
	memset(b, 0, sizeof(*b));
}

void pbw__free(struct pbw *b)
{
	if (!b)
		return;
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* room for n more bytes; false (and err set) when there is none */
static bool room(struct pbw *b, size_t n)
{
	if (b->err)
		return false;
	if (util__reserve((void **)&b->buf, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return false;
	}
	return true;
}

/* v as a varint into out (10 bytes at most); its length */
static size_t varint_enc(unsigned char *out, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

void pbw__varint(struct pbw *b, __u64 v)
{
	if (room(b, 10))
		b->len += varint_enc(b->buf + b->len, v);
}

static void tag(struct pbw *b, unsigned int field, unsigned int wire)
{
	pbw__varint(b, ((__u64)field << 3) | wire);
}

void pbw__uint(struct pbw *b, unsigned int field, __u64 v)
{
	tag(b, field, WIRE_VARINT);
	pbw__varint(b, v);
}

void pbw__bytes(struct pbw *b, unsigned int field, const void *p, size_t n)
{
	tag(b, field, WIRE_LEN);
	pbw__varint(b, n);
	if (n && room(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void pbw__string(struct pbw *b, unsigned int field, const char *s)
{
	pbw__bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

size_t pbw__begin(struct pbw *b, unsigned int field)
{
	tag(b, field, WIRE_LEN);
	return b->len;
}

void pbw__end(struct pbw *b, size_t mark)
{
	unsigned char len[10];
	size_t body, n;

	if (b->err || mark > b->len)
		return;
	body = b->len - mark;
	n = varint_enc(len, body);
	if (!room(b, n))
		return;
	memmove(b->buf + mark + n, b->buf + mark, body);
	memcpy(b->buf + mark, len, n);
	b->len += n;
}

int pbw__write_gzip(const struct pbw *b, FILE *f)
{
	unsigned char out[16384];
	z_stream z = {};
	int err = 0, zr;

	if (b->err)
		return b->err;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->buf;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}
