// SPDX-License-Identifier: GPL-2.0
/*
 * --record: the recording opened as the user, written as the run goes, rotated at --record-
 * max into --record-keep segments, committed or removed at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "collect/collector.h"
#include "collect/record.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "report/outputs.h"
#include "session_int.h"

/*
 * --record FILE is opened with the other outputs, as the invoking user, as a temporary
 * file beside FILE. It takes FILE's name (rename) once the run starts, with its header
 * and first chunk in it, and grows in place from then on: a run that fails to start
 * leaves the old FILE; a reader of FILE always finds whole chunks, at worst followed by
 * the cut one a killed memphase was writing, which `memphase report` leaves out and says
 * so. (The helper removes an uncommitted temporary file when memphase dies.)
 */
int session_record__open(struct session *s)
{
	/* rotated segments are not thinned out: they end at the size instead */
	struct recorder_opts ro = { .max_bytes = s->env->record_keep ? 0 : s->env->record_max };
	char p[256];
	int err;

	if (!s->env->record)
		return 0;
	err = userfs__open(s->fs, s->env->record, &s->rec_file);
	if (!err && s->rec_file.kind != USERFS_FILE)
		err = -ESPIPE;
	/* one line said: the recording would replace an output, or be replaced by it */
	if (!err && outputs__clash(&s->out, &s->rec_file, "record", s->env->record)) {
		userfs__discard(s->fs, &s->rec_file);
		return -EINVAL;
	}
	if (err) {
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record),
			err == -ESPIPE ? "a recording must be a regular file" :
			s->rec_file.why[0] ? s->rec_file.why : strerror(-err));
		if (!err || err == -ESPIPE)
			userfs__discard(s->fs, &s->rec_file);
		return err ? err : -ESPIPE;
	}
	s->rec_open = true;
	ro.fd = s->rec_file.fd;
	s->rec = recorder__new(&ro);
	if (!s->rec) {
		err = -errno;
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
		return err;
	}
	return 0;
}

/* The run started: the recording takes its name. */
int session_record__commit(struct session *s)
{
	char p[256];
	int err;

	if (!s->rec)
		return 0;
	err = recorder__flush(s->rec);
	if (!err)
		err = userfs__commit(s->fs, &s->rec_file);
	if (err) {
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
		return err;
	}
	s->rec_committed = true;
	return 0;
}

/* An older segment's name: FILE's base name with .NNNNNN before .mprec (or at the end). */
static void segment_name(const char *record, unsigned int n, char *buf, size_t len)
{
	const char *base = strrchr(record, '/');
	size_t l;

	base = base ? base + 1 : record;
	l = strlen(base);
	if (l > 6 && !strcmp(base + l - 6, ".mprec"))
		snprintf(buf, len, "%.*s.%06u.mprec", (int)(l - 6), base, n);
	else
		snprintf(buf, len, "%s.%06u", base, n);
}

static int rotate_failed(struct session *s, const char *what, int err, const char *why)
{
	char p[256];

	s->rec_rotate_failed = true;
	fprintf(stderr, "memphase: --record-keep: %s %s: %s; the recording goes on in one "
			"file\n", what, utf8__esc_term(p, sizeof(p), s->env->record),
		why && why[0] ? why : strerror(-err));
	return err;
}

/*
 * --record-keep: once the current segment reaches --record-max (and holds at least half of
 * it past its set-up), it takes the next older segment's name and ends; a new one, opened
 * as the invoking user like every output, takes FILE's name with everything a replay
 * needs first (collector__segment_begin). Older segments past the count are removed: only
 * those this run wrote, and only while they are still the files it wrote. 0 or -errno
 * (reported; the recording goes on in the current file).
 */
int session_record__rotate(struct session *s)
{
	struct userfs_file next = { .fd = -1, .id = -1 };
	struct recorder_opts ro = {};
	char name[NAME_MAX + 1], p[256];
	struct recorder *rec;
	__u64 bytes;
	int err, tries;

	if (!s->env->record_keep || !s->rec || !s->rec_committed || s->rec_rotate_failed)
		return 0;
	bytes = recorder__bytes(s->rec);
	if (bytes < s->env->record_max || bytes - s->rec_preamble < s->env->record_max / 2)
		return 0;
	err = userfs__open(s->fs, s->env->record, &next);
	if (err)
		return rotate_failed(s, "cannot open a new segment of", err, next.why);
	ro.fd = next.fd;
	rec = recorder__new(&ro);
	if (!rec) {
		err = -errno;
		userfs__discard(s->fs, &next);
		return rotate_failed(s, "cannot start a new segment of", err, NULL);
	}
	/* the file being written takes its older name first: on failure it just goes on */
	for (tries = 0; tries < 100; tries++) {
		segment_name(s->env->record, ++s->rec_seq, name, sizeof(name));
		err = userfs__set_aside(s->fs, &s->rec_file, name);
		if (err != -EEXIST)
			break;
	}
	if (err) {
		recorder__free(rec);
		userfs__discard(s->fs, &next);
		return rotate_failed(s, "cannot rename", err, s->rec_file.why);
	}
	collector__segment_end(s->collector);
	err = recorder__free(s->rec);
	if (!err && fsync(s->rec_file.fd))
		err = -errno;
	if (err)
		fprintf(stderr, "memphase: writing the recording segment %s failed: %s\n",
			utf8__esc_term(p, sizeof(p), name), strerror(-err));
	userfs__close(&s->rec_file);
	s->rec_old[s->nrec_old++] = s->rec_file;
	s->rec = rec;
	s->rec_file = next;
	collector__segment_begin(s->collector, rec);
	err = recorder__flush(rec);
	if (!err)
		err = userfs__commit(s->fs, &s->rec_file);
	if (err)
		fprintf(stderr, "memphase: --record %s: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record),
			s->rec_file.why[0] ? s->rec_file.why : strerror(-err));
	s->rec_preamble = recorder__bytes(rec);
	while (s->nrec_old && s->nrec_old > s->env->record_keep - 1) {
		err = userfs__remove(s->fs, &s->rec_old[0]);
		if (err && err != -ENOENT)
			fprintf(stderr, "memphase: --record-keep: an old segment was left: %s\n",
				strerror(-err));
		memmove(&s->rec_old[0], &s->rec_old[1], --s->nrec_old * sizeof(s->rec_old[0]));
	}
	return 0;
}

/* The end: the last chunk written. 0 or -errno (reported). */
int session_record__close(struct session *s)
{
	char p[256];
	int err = recorder__free(s->rec);

	s->rec = NULL;
	if (err)
		fprintf(stderr, "memphase: writing the recording %s failed: %s\n",
			utf8__esc_term(p, sizeof(p), s->env->record), strerror(-err));
	if (!s->rec_open)
		return err;
	s->rec_open = false;
	if (s->rec_committed && !err && fsync(s->rec_file.fd))
		err = -errno;
	if (s->rec_committed)
		userfs__close(&s->rec_file);
	else
		userfs__discard(s->fs, &s->rec_file);
	return err;
}
