/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording file format: typed records in append-only, checksummed chunks. Plain
 * code: it knows bytes, not what the records mean (collect/record.c writes them,
 * collect/replay.c reads them).
 *
 *   file   = header chunk*
 *   header = "MEMPHREC" version:u32 header_len:u32 reserved:u32 crc:u32   (24 bytes)
 *   chunk  = "MPCK" seq:u32 clen:u32 rlen:u32 pcrc:u32 hcrc:u32 payload[clen]
 *   payload: zlib deflate of rlen bytes of records
 *   record = type:u16 flags:u16 len:u32 data[len]
 *
 * All integers little-endian. crc is crc32 (zlib) of the header's first 20 bytes; hcrc of
 * the chunk header's first 20 bytes, pcrc of the compressed payload; seq counts from 0.
 * A writer appends whole chunks with one write(2) each and never rewrites a byte, so a
 * writer that dies (SIGKILL, power loss) leaves every chunk before the last one intact: a
 * reader reads up to the last whole chunk and says the file is truncated. A record type a
 * reader does not know is skipped (and counted): new kinds of data extend the format
 * without a new version; the version changes only when a known record changes meaning.
 */
#ifndef __MP_RECFILE_H
#define __MP_RECFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define RECFILE_MAGIC		"MEMPHREC"
#define RECFILE_VERSION		1
#define RECFILE_HEADER_LEN	24
#define RECFILE_CHUNK_HDR	24
#define RECFILE_MAX_CHUNK	(16U << 20)	/* raw bytes of records in one chunk, at most */
#define RECFILE_FLUSH_BYTES	(256U << 10)	/* a chunk is written when this much waits */

/* A growable byte buffer records are built in. */
struct recbuf {
	unsigned char *data;
	size_t len, cap;
	bool failed;		/* an allocation failed: the contents are incomplete */
};

void recbuf__reset(struct recbuf *b);
void recbuf__free(struct recbuf *b);
void recbuf__put(struct recbuf *b, const void *p, size_t n);
void recbuf__u8(struct recbuf *b, __u8 v);
void recbuf__u16(struct recbuf *b, __u16 v);
void recbuf__u32(struct recbuf *b, __u32 v);
void recbuf__u64(struct recbuf *b, __u64 v);
void recbuf__f64(struct recbuf *b, double v);
/* A string: u32 length, then its bytes (no NUL). NULL is written as "". */
void recbuf__str(struct recbuf *b, const char *s);

/* Reading a record's data: every getter fails (0, "", false) once the data runs out. */
struct reccur {
	const unsigned char *p;
	size_t left;
	bool bad;		/* read past the end, or a malformed value */
};

void reccur__init(struct reccur *c, const void *data, size_t len);
void reccur__get(struct reccur *c, void *p, size_t n);
void reccur__skip(struct reccur *c, size_t n);
__u8 reccur__u8(struct reccur *c);
__u16 reccur__u16(struct reccur *c);
__u32 reccur__u32(struct reccur *c);
__u64 reccur__u64(struct reccur *c);
double reccur__f64(struct reccur *c);
/* A string into buf (NUL-terminated; bad if it does not fit or holds a NUL). */
void reccur__str(struct reccur *c, char *buf, size_t size);
/* A string in place: *len bytes at the returned pointer (no NUL), NULL when bad. */
const char *reccur__strref(struct reccur *c, __u32 *len);

/* ---- writing ---- */

struct recfile_writer;

/* Writes the header to fd (owned by the caller). NULL + errno. */
struct recfile_writer *recfile_writer__new(int fd);
/* Adds one record to the pending chunk (written when it holds RECFILE_FLUSH_BYTES). */
int recfile_writer__add(struct recfile_writer *w, __u16 type, const void *data, size_t len);
/* Adds bytes that already are records (type, flags, len, data ...) as they are. */
int recfile_writer__add_raw(struct recfile_writer *w, const void *records, size_t len);
/* Writes the pending records as one chunk (nothing pending: nothing written). 0/-errno. */
int recfile_writer__flush(struct recfile_writer *w);
/* Bytes written to the file so far (header and chunks). */
__u64 recfile_writer__bytes(const struct recfile_writer *w);
/* The first write error (-errno), 0 if none. */
int recfile_writer__error(const struct recfile_writer *w);
/* Flushes and frees (the fd stays open). NULL-safe; returns the first error. */
int recfile_writer__free(struct recfile_writer *w);

/* ---- reading ---- */

struct recfile_reader;

/* One record: data valid until the next call. */
struct recfile_rec {
	__u16 type;
	__u16 flags;
	__u32 len;
	const void *data;
};

/* Reads the header from f (owned by the caller). NULL + errno; *why says what is wrong. */
struct recfile_reader *recfile_reader__new(FILE *f, char *why, size_t why_len);
/*
 * The next record: 1, 0 at the end of the records (a clean end, or a truncated last
 * chunk: recfile_reader__truncated()), -EBADMSG for a corrupt chunk or record (why set),
 * -ENOMEM, -EIO.
 */
int recfile_reader__next(struct recfile_reader *r, struct recfile_rec *rec);
/* The file ended inside a chunk (a writer that was killed): how many bytes were left. */
bool recfile_reader__truncated(const struct recfile_reader *r, __u64 *tail_bytes);
/* Whole chunks read so far, and the file offset past the last one. */
__u32 recfile_reader__chunks(const struct recfile_reader *r);
__u64 recfile_reader__offset(const struct recfile_reader *r);
/* What was wrong, after -EBADMSG. */
const char *recfile_reader__why(const struct recfile_reader *r);
void recfile_reader__free(struct recfile_reader *r);

#endif
