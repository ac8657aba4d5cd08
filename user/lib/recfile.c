// SPDX-License-Identifier: GPL-2.0
/* The recording file format: checksummed, compressed chunks of typed records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/recfile.h"
#include "lib/util.h"

#define CHUNK_MAGIC	"MPCK"

/* ---- little-endian bytes ---- */

static void le_put(unsigned char *p, __u64 v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = v >> (8 * i);
}

static __u64 le_get(const unsigned char *p, int n)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

static __u32 crc(const void *p, size_t n)
{
	return crc32(0L, p, n);
}

/* ---- recbuf ---- */

void recbuf__reset(struct recbuf *b)
{
	b->len = 0;
	b->failed = false;
}

void recbuf__free(struct recbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void recbuf__put(struct recbuf *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (util__reserve((void **)&b->data, &b->cap, b->len + n, 1)) {
		b->failed = true;
		return;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_le(struct recbuf *b, __u64 v, int n)
{
	unsigned char t[8];

	le_put(t, v, n);
	recbuf__put(b, t, n);
}

void recbuf__u8(struct recbuf *b, __u8 v)
{
	put_le(b, v, 1);
}

void recbuf__u16(struct recbuf *b, __u16 v)
{
	put_le(b, v, 2);
}

void recbuf__u32(struct recbuf *b, __u32 v)
{
	put_le(b, v, 4);
}

void recbuf__u64(struct recbuf *b, __u64 v)
{
	put_le(b, v, 8);
}

void recbuf__f64(struct recbuf *b, double v)
{
	__u64 u;

	memcpy(&u, &v, sizeof(u));
	put_le(b, u, 8);
}

void recbuf__str(struct recbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	recbuf__u32(b, n);
	recbuf__put(b, s, n);
}

/* ---- reccur ---- */

void reccur__init(struct reccur *c, const void *data, size_t len)
{
	c->p = data;
	c->left = len;
	c->bad = false;
}

static const unsigned char *take(struct reccur *c, size_t n)
{
	const unsigned char *p;

	if (c->bad || c->left < n) {
		c->bad = true;
		return NULL;
	}
	p = c->p;
	c->p += n;
	c->left -= n;
	return p;
}

void reccur__get(struct reccur *c, void *p, size_t n)
{
	const unsigned char *s = take(c, n);

	if (s)
		memcpy(p, s, n);
	else
		memset(p, 0, n);
}

void reccur__skip(struct reccur *c, size_t n)
{
	take(c, n);
}

static __u64 get_le(struct reccur *c, int n)
{
	const unsigned char *p = take(c, n);

	return p ? le_get(p, n) : 0;
}

__u8 reccur__u8(struct reccur *c)
{
	return get_le(c, 1);
}

__u16 reccur__u16(struct reccur *c)
{
	return get_le(c, 2);
}

__u32 reccur__u32(struct reccur *c)
{
	return get_le(c, 4);
}

__u64 reccur__u64(struct reccur *c)
{
	return get_le(c, 8);
}

double reccur__f64(struct reccur *c)
{
	__u64 u = get_le(c, 8);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

const char *reccur__strref(struct reccur *c, __u32 *len)
{
	__u32 n = reccur__u32(c);
	const unsigned char *p = take(c, n);

	*len = p ? n : 0;
	if (p && memchr(p, '\0', n)) {
		c->bad = true;
		return NULL;
	}
	return (const char *)p;
}

void reccur__str(struct reccur *c, char *buf, size_t size)
{
	__u32 n;
	const char *s = reccur__strref(c, &n);

	buf[0] = '\0';
	if (!s)
		return;
	if (n >= size) {
		c->bad = true;
		return;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* ---- writing ---- */

struct recfile_writer {
	int fd;
	__u32 seq;
	__u64 bytes;
	int err;
	struct recbuf pending;
	unsigned char *z;
	size_t zcap;
};

static int write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (!w)
			return -EIO;
		s += w;
		n -= w;
	}
	return 0;
}

struct recfile_writer *recfile_writer__new(int fd)
{
	struct recfile_writer *w = calloc(1, sizeof(*w));
	unsigned char h[RECFILE_HEADER_LEN] = {};
	int err;

	if (!w)
		return NULL;
	w->fd = fd;
	memcpy(h, RECFILE_MAGIC, 8);
	le_put(h + 8, RECFILE_VERSION, 4);
	le_put(h + 12, RECFILE_HEADER_LEN, 4);
	le_put(h + 20, crc(h, 20), 4);
	err = write_all(fd, h, sizeof(h));
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	w->bytes = sizeof(h);
	return w;
}

int recfile_writer__add(struct recfile_writer *w, __u16 type, const void *data, size_t len)
{
	if (w->err)
		return w->err;
	if (len > RECFILE_MAX_CHUNK / 2)
		return -E2BIG;
	if (w->pending.len + 8 + len > RECFILE_MAX_CHUNK) {
		int err = recfile_writer__flush(w);

		if (err)
			return err;
	}
	recbuf__u16(&w->pending, type);
	recbuf__u16(&w->pending, 0);
	recbuf__u32(&w->pending, len);
	recbuf__put(&w->pending, data, len);
	if (w->pending.failed)
		return w->err = -ENOMEM;
	if (w->pending.len >= RECFILE_FLUSH_BYTES)
		return recfile_writer__flush(w);
	return 0;
}

int recfile_writer__add_raw(struct recfile_writer *w, const void *records, size_t len)
{
	if (w->err)
		return w->err;
	if (w->pending.len + len > RECFILE_MAX_CHUNK)
		return -E2BIG;
	recbuf__put(&w->pending, records, len);
	return w->pending.failed ? (w->err = -ENOMEM) : 0;
}

int recfile_writer__flush(struct recfile_writer *w)
{
	uLongf zlen;
	unsigned char *h;
	int err;

	if (w->err || !w->pending.len)
		return w->err;
	zlen = compressBound(w->pending.len);
	if (zlen + RECFILE_CHUNK_HDR > w->zcap) {
		unsigned char *z = realloc(w->z, zlen + RECFILE_CHUNK_HDR);

		if (!z)
			return w->err = -ENOMEM;
		w->z = z;
		w->zcap = zlen + RECFILE_CHUNK_HDR;
	}
	/* level 1: the chunk is mostly repeated counters, fast compression takes most */
	if (compress2(w->z + RECFILE_CHUNK_HDR, &zlen, w->pending.data, w->pending.len, 1) !=
	    Z_OK)
		return w->err = -ENOMEM;
	h = w->z;
	memcpy(h, CHUNK_MAGIC, 4);
	le_put(h + 4, w->seq, 4);
	le_put(h + 8, zlen, 4);
	le_put(h + 12, w->pending.len, 4);
	le_put(h + 16, crc(h + RECFILE_CHUNK_HDR, zlen), 4);
	le_put(h + 20, crc(h, 20), 4);
	/* one write: a reader (or a crash) sees the chunk whole or cut, never interleaved */
	err = write_all(w->fd, h, RECFILE_CHUNK_HDR + zlen);
	if (err)
		return w->err = err;
	w->bytes += RECFILE_CHUNK_HDR + zlen;
	w->seq++;
	recbuf__reset(&w->pending);
	return 0;
}

__u64 recfile_writer__bytes(const struct recfile_writer *w)
{
	return w->bytes;
}

int recfile_writer__error(const struct recfile_writer *w)
{
	return w->err;
}

int recfile_writer__free(struct recfile_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = recfile_writer__flush(w);
	recbuf__free(&w->pending);
	free(w->z);
	free(w);
	return err;
}

/* ---- reading ---- */

struct recfile_reader {
	FILE *f;
	__u64 off;		/* past the last whole chunk */
	__u32 chunks;
	bool truncated;
	__u64 tail;
	bool done;
	unsigned char *raw, *z;
	size_t rawcap, zcap;
	size_t rawlen, pos;	/* records of the current chunk, and the next one's offset */
	char why[160];
};

struct recfile_reader *recfile_reader__new(FILE *f, char *why, size_t why_len)
{
	unsigned char h[RECFILE_HEADER_LEN];
	struct recfile_reader *r;
	size_t n = fread(h, 1, sizeof(h), f);
	__u32 version, hlen;

	if (n < 8 || memcmp(h, RECFILE_MAGIC, 8)) {
		snprintf(why, why_len, "not a memphase recording");
		errno = EBADMSG;
		return NULL;
	}
	if (n < sizeof(h) || le_get(h + 20, 4) != crc(h, 20)) {
		snprintf(why, why_len, "the recording's header is damaged");
		errno = EBADMSG;
		return NULL;
	}
	version = le_get(h + 8, 4);
	hlen = le_get(h + 12, 4);
	if (version != RECFILE_VERSION || hlen != RECFILE_HEADER_LEN) {
		snprintf(why, why_len,
			 "recording format version %u: this memphase reads version %u", version,
			 RECFILE_VERSION);
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	r->f = f;
	r->off = sizeof(h);
	return r;
}

static int grow(unsigned char **p, size_t *cap, size_t n)
{
	unsigned char *d;

	if (n <= *cap)
		return 0;
	d = realloc(*p, n);
	if (!d)
		return -ENOMEM;
	*p = d;
	*cap = n;
	return 0;
}

static int bad(struct recfile_reader *r, const char *what)
{
	snprintf(r->why, sizeof(r->why), "corrupt recording: %s in chunk %u (byte %llu)", what,
		 r->chunks, (unsigned long long)r->off);
	r->done = true;
	return -EBADMSG;
}

/* The file ends inside the chunk starting at r->off: a writer that was killed. */
static int cut(struct recfile_reader *r, size_t have)
{
	r->truncated = true;
	r->tail = have;
	r->done = true;
	return 0;
}

/* Reads the next chunk into r->raw. 1, 0 at the end, or -errno. */
static int next_chunk(struct recfile_reader *r)
{
	unsigned char h[RECFILE_CHUNK_HDR];
	__u32 clen, rlen;
	uLongf out;
	size_t n;

	n = fread(h, 1, sizeof(h), r->f);
	if (!n && feof(r->f)) {
		r->done = true;
		return 0;
	}
	if (ferror(r->f))
		return -EIO;
	if (n < sizeof(h))
		return memcmp(h, CHUNK_MAGIC, n < 4 ? n : 4) ? bad(r, "no chunk header") :
							       cut(r, n);
	if (memcmp(h, CHUNK_MAGIC, 4) || le_get(h + 20, 4) != crc(h, 20))
		return bad(r, "damaged chunk header");
	if (le_get(h + 4, 4) != r->chunks)
		return bad(r, "chunk out of sequence");
	clen = le_get(h + 8, 4);
	rlen = le_get(h + 12, 4);
	if (!rlen || rlen > RECFILE_MAX_CHUNK || clen > compressBound(rlen))
		return bad(r, "impossible chunk size");
	if (grow(&r->z, &r->zcap, clen) || grow(&r->raw, &r->rawcap, rlen))
		return -ENOMEM;
	n = fread(r->z, 1, clen, r->f);
	if (ferror(r->f))
		return -EIO;
	if (n < clen)
		return cut(r, sizeof(h) + n);
	if (le_get(h + 16, 4) != crc(r->z, clen))
		return bad(r, "checksum mismatch");
	out = rlen;
	if (uncompress(r->raw, &out, r->z, clen) != Z_OK || out != rlen)
		return bad(r, "bad compressed data");
	r->rawlen = rlen;
	r->pos = 0;
	r->off += sizeof(h) + clen;
	r->chunks++;
	return 1;
}

int recfile_reader__next(struct recfile_reader *r, struct recfile_rec *rec)
{
	const unsigned char *p;
	__u32 len;
	int err;

	while (r->pos >= r->rawlen) {
		if (r->done)
			return 0;
		err = next_chunk(r);
		if (err <= 0)
			return err;
	}
	if (r->rawlen - r->pos < 8)
		return bad(r, "record header cut short");
	p = r->raw + r->pos;
	len = le_get(p + 4, 4);
	if (len > r->rawlen - r->pos - 8)
		return bad(r, "record longer than its chunk");
	rec->type = le_get(p, 2);
	rec->flags = le_get(p + 2, 2);
	rec->len = len;
	rec->data = p + 8;
	r->pos += 8 + len;
	return 1;
}

bool recfile_reader__truncated(const struct recfile_reader *r, __u64 *tail_bytes)
{
	if (tail_bytes)
		*tail_bytes = r->tail;
	return r->truncated;
}

__u32 recfile_reader__chunks(const struct recfile_reader *r)
{
	return r->chunks;
}

__u64 recfile_reader__offset(const struct recfile_reader *r)
{
	return r->off;
}

const char *recfile_reader__why(const struct recfile_reader *r)
{
	return r->why;
}

void recfile_reader__free(struct recfile_reader *r)
{
	if (!r)
		return;
	free(r->raw);
	free(r->z);
	free(r);
}
