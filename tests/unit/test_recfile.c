// SPDX-License-Identifier: GPL-2.0
/*
 * The recording format: what is written reads back record by record; a record type the
 * reader does not know is skipped and counted; every file of the fuzz corpus and every
 * crasher the fuzzer ever found (tests/fuzz/) reads back without a crash.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "collect/collector.h"
#include "collect/record.h"
#include "collect/replay.h"
#include "lib/recfile.h"

static const struct replay_opts plain = { .from_s = -1, .to_s = -1 };
/* the whole run, and a window of one phase */
static const struct replay_opts opts[2] = {
	{ .keep_raw = true, .from_s = -1, .to_s = -1 },
	{ .keep_raw = true, .from_s = 0.01, .to_s = 0.3, .phase = "generate" },
};

static FILE *reopen(int fd)
{
	lseek(fd, 0, SEEK_SET);
	return fdopen(dup(fd), "rb");
}

TEST(recfile_round_trip_and_truncation)
{
	int fd = memfd_create("rec", 0), i, n = 0;
	struct recfile_writer *w = recfile_writer__new(fd);
	struct recfile_reader *r;
	struct recfile_rec rec;
	char why[160], big[3000];
	__u64 tail;
	FILE *f;

	if (!ASSERT_OK_PTR(w, "writer"))
		return;
	memset(big, 'x', sizeof(big));
	for (i = 0; i < 300; i++) {
		ASSERT_OK(recfile_writer__add(w, 1 + i % 3, big, i * 10), "add");
		if (i % 100 == 99)
			ASSERT_OK(recfile_writer__flush(w), "flush");
	}
	ASSERT_OK(recfile_writer__free(w), "free");
	f = reopen(fd);
	r = recfile_reader__new(f, why, sizeof(why));
	if (!ASSERT_OK_PTR(r, "reader"))
		return;
	while (recfile_reader__next(r, &rec) == 1) {
		ASSERT_EQ(rec.type, 1 + n % 3, "type");
		ASSERT_EQ(rec.len, (__u32)n * 10, "len");
		n++;
	}
	ASSERT_EQ(n, 300, "records");
	ASSERT_EQ(recfile_reader__chunks(r), 3, "chunks");
	ASSERT_FALSE(recfile_reader__truncated(r, NULL), "whole");
	recfile_reader__free(r);
	fclose(f);
	/* cut inside the last chunk: the first two read, the file says it was cut */
	if (!ASSERT_OK(ftruncate(fd, lseek(fd, 0, SEEK_END) - 5), "cut"))
		return;
	f = reopen(fd);
	r = recfile_reader__new(f, why, sizeof(why));
	for (n = 0; recfile_reader__next(r, &rec) == 1; n++)
		;
	ASSERT_EQ(n, 200, "records before the cut");
	ASSERT_TRUE(recfile_reader__truncated(r, &tail), "truncated");
	ASSERT_GT(tail, 0, "tail bytes");
	recfile_reader__free(r);
	fclose(f);
	close(fd);
}

TEST(replay_skips_and_counts_unknown_record_types)
{
	int fd = memfd_create("rec", 0);
	struct recfile_writer *w = recfile_writer__new(fd);
	struct replay_result res;
	struct recbuf b = {};
	struct collector *c;
	struct model *m = calloc(1, sizeof(*m));
	char why[160];
	FILE *f;

	/* a begin record: pid 42, run, t=1s, phases startup and load, no argv */
	recbuf__u32(&b, 42);
	recbuf__u32(&b, REC_MODE_RUN);
	recbuf__u64(&b, 1000000000ULL);
	recbuf__u32(&b, 2);
	recbuf__str(&b, "startup");
	recbuf__str(&b, "load");
	recbuf__u32(&b, 0);
	recfile_writer__add(w, REC_BEGIN, b.data, b.len);
	recfile_writer__add(w, 999, "future", 6);
	recfile_writer__add(w, REC_NR_TYPES + 5, NULL, 0);
	recbuf__reset(&b);
	recbuf__u64(&b, 3000000000ULL);
	recfile_writer__add(w, REC_FINISH, b.data, b.len);
	recfile_writer__free(w);
	f = reopen(fd);
	c = replay__file(f, m, &plain, &res, why, sizeof(why));
	if (ASSERT_OK_PTR(c, why)) {
		ASSERT_EQ(res.unknown, 2, "unknown records");
		ASSERT_TRUE(res.finished, "finished");
		ASSERT_EQ(m->root_pid, 42, "root");
		ASSERT_STREQ(m->names[1], "load", "phase name");
		ASSERT_EQ(m->end_ns, 3000000000ULL, "end");
		collector__free(c);
		model__free(m);
	}
	free(m);
	recbuf__free(&b);
	fclose(f);
	close(fd);
}

/* Every file in dir reads back (a model or a reason): 0 files is a failure. */
static int replay_dir(const char *dir, bool must_have)
{
	struct replay_result res;
	struct dirent *de;
	struct model *m = calloc(1, sizeof(*m));
	char path[512], why[256];
	int n = 0;
	DIR *d = opendir(dir);

	if (!d || !m) {
		free(m);
		if (d)
			closedir(d);
		return must_have ? -1 : 0;
	}
	while ((de = readdir(d))) {
		struct collector *c;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		for (int k = 0; k < 2; k++) {
			f = fopen(path, "rb");
			if (!f)
				continue;
			c = replay__file(f, m, &opts[k], &res, why, sizeof(why));
			if (c) {
				collector__free(c);
				model__free(m);
			} else if (!why[0]) {
				fprintf(stderr, "%s: rejected without a reason\n", path);
				n = -1000000;
			}
			fclose(f);
		}
		n++;
	}
	closedir(d);
	free(m);
	return n;
}

TEST(fuzz_corpus_and_crashers_read_back)
{
	/* the sources' directory, as the compiler saw this file */
	char dir[512];
	const char *me = __FILE__, *slash = strrchr(me, '/');
	int n;

	snprintf(dir, sizeof(dir), "%.*s/../fuzz/corpus", (int)(slash - me), me);
	n = replay_dir(dir, true);
	ASSERT_GT(n, 5, "corpus files read");
	snprintf(dir, sizeof(dir), "%.*s/../fuzz/crashers", (int)(slash - me), me);
	ASSERT_GE(replay_dir(dir, false), 0, "crashers read");
}
