// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON summary of a hand-built model, read back by python3's json module (skipped
 * without python3): contiguous histogram buckets, top_mappings' exact path, deleted, start
 * and size; the bpf_stats key (null without --bpf-stats) and the summary's table of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "model/model.h"
#include "report/report_json.h"
#include "report/summary.h"

#define MS 1000000ULL

/* asserts in python over the document d (the first phase named "load" is p) */
static const char check_py[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"p = [x for x in d['phases'] if x['name'] == 'load'][0]\n"
	"h = p['histograms']['rss_growth_per_call']['buckets']\n"
	"want = [(4, 7, 2), (8, 15, 0), (16, 31, 0), (32, 63, 1)]\n"
	"got = [(b['low'], b['high'], b['count']) for b in h]\n"
	"assert got == want, ('rss_growth_per_call', got)\n"
	"one = p['histograms']['mmap_size']['buckets']\n"
	"assert [(b['low'], b['count']) for b in one] == [(1 << 20, 5)], one\n"
	"s = [x for x in d['phases'] if x['name'] == 'startup'][0]\n"
	"assert s['histograms']['rss_growth_per_call']['buckets'] == [], s['histograms']\n"
	"t = p['top_mappings']\n"
	"assert [m['path'] for m in t] == ['/models/a\\nb \\u00e9.gguf', '[heap]'], t\n"
	"f, heap = t\n"
	"assert f['deleted'] is True and heap['deleted'] is False, t\n"
	"assert (f['start'], f['size'], f['bytes']) == (0x7f0000000000, 16 << 20, 8 << 20), f\n"
	"assert (heap['start'], heap['size']) == (0x560000000000, 1 << 20), heap\n"
	"assert f['kind'] == 'file' and f['class'] == 'file', f\n";

TEST(report_json_buckets_and_mappings)
{
	char dir[] = "/tmp/memphase-rj-XXXXXX", path[128];
	struct model *m = calloc(1, sizeof(*m));
	struct model_mapping mm;
	struct mp_phase_stats s = {};
	struct mp_event e = { .type = MP_EV_PHASE, .pid = 100, .arg = 1, .ts_ns = 1100 * MS };
	FILE *f = NULL;
	int err;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	if (system("python3 -c '' >/dev/null 2>&1")) {
		test__skip("python3 not found, JSON not read back");
		free(m);
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp")) {
		free(m);
		return;
	}
	model__init(m, 100, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__on_event(m, &e);
	/* slots 3 and 6: [4, 7] twice, [32, 63] once; 4 and 5 empty in between */
	s.hist[MP_HIST_CALL_GROWTH][3] = 2;
	s.hist[MP_HIST_CALL_GROWTH][6] = 1;
	s.hist[MP_HIST_MMAP_SIZE][21] = 5;
	s.growth[MP_FILE] = 8 << 20;
	model__set_stats(m, 1, &s);

	memset(&mm, 0, sizeof(mm));
	snprintf(mm.path, sizeof(mm.path), "/models/a\nb \xc3\xa9.gguf");
	mm.deleted = true;
	mm.cls = MP_FILE;
	mm.kind = MP_MAP_FILE;
	mm.bytes = 8 << 20;
	mm.start = 0x7f0000000000ULL;
	mm.size = 16 << 20;
	model__offer_mapping(m, 1, &mm);
	memset(&mm, 0, sizeof(mm));
	snprintf(mm.path, sizeof(mm.path), "[heap]");
	mm.cls = MP_ANON;
	mm.kind = MP_MAP_HEAP;
	mm.bytes = 4096;
	mm.start = 0x560000000000ULL;
	mm.size = 1 << 20;
	model__offer_mapping(m, 1, &mm);
	model__finish(m, 2000 * MS);

	snprintf(path, sizeof(path), "%s/out.json", dir);
	f = fopen(path, "w");
	if (!ASSERT_OK_PTR(f, "fopen"))
		goto cleanup;
	err = report_json__write(f, m);
	if (!ASSERT_OK(fclose(f), "fclose") | !ASSERT_OK(err, "report_json__write"))
		goto cleanup;
	if (!ASSERT_OK(fixture__write(dir, "check.py", check_py, strlen(check_py)), "check.py"))
		goto cleanup;
	ASSERT_OK(fixture__run("python3 %s/check.py %s", dir, path), "json.load and checks");
cleanup:
	fixture__run("rm -rf '%s'", dir);
	model__free(m);
	free(m);
}

/* "bpf_stats": null without --bpf-stats; with it, per program and total, as the summary */
static const char bpf_py[] =
	"import json, sys\n"
	"none = json.load(open(sys.argv[1]))\n"
	"assert 'bpf_stats' in none and none['bpf_stats'] is None, none.get('bpf_stats', 'absent')\n"
	"b = json.load(open(sys.argv[2]))['bpf_stats']\n"
	"got = [(p['name'], p['runs'], p['run_time_ns'], p['ns_per_run']) for p in b['programs']]\n"
	"want = [('handle_fault', 4, 1000, 250.0), ('handle_marker', 0, 0, None)]\n"
	"assert got == want, got\n"
	"assert b['total'] == {'runs': 4, 'run_time_ns': 1000}, b['total']\n";

static int write_json(const char *path, const struct model *m)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = report_json__write(f, m);
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

TEST(report_json_bpf_stats)
{
	char dir[] = "/tmp/memphase-rjb-XXXXXX", none[128], with[128];
	static const char want_text[] =
		"\nBPF program        RUNS      TOTAL_MS   NS/RUN\n"
		"handle_fault                4       0.00      250\n"
		"handle_marker               0       0.00        0\n"
		"total                       4       0.00\n";
	struct model *m = calloc(1, sizeof(*m));
	struct model_bpf_stats *st;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	model__init(m, 100, 1000 * MS);
	model__finish(m, 2000 * MS);
	/* the summary prints nothing without --bpf-stats */
	f = open_memstream(&text, &len);
	if (!ASSERT_OK_PTR(f, "open_memstream"))
		goto out;
	summary__bpf_stats(f, m);
	fclose(f);
	ASSERT_EQ(len, (size_t)0, "no text without --bpf-stats");
	free(text);
	text = NULL;

	st = &m->bpf_stats;
	st->have = true;
	st->nprogs = 2;
	snprintf(st->progs[0].name, sizeof(st->progs[0].name), "handle_fault");
	st->progs[0].runs = 4;
	st->progs[0].run_time_ns = 1000;
	snprintf(st->progs[1].name, sizeof(st->progs[1].name), "handle_marker");
	f = open_memstream(&text, &len);
	if (!ASSERT_OK_PTR(f, "open_memstream"))
		goto out;
	summary__bpf_stats(f, m);
	fclose(f);
	ASSERT_STREQ(text, want_text, "summary text");

	if (system("python3 -c '' >/dev/null 2>&1")) {
		test__skip("python3 not found, JSON not read back");
		goto out;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		goto out;
	snprintf(none, sizeof(none), "%s/none.json", dir);
	snprintf(with, sizeof(with), "%s/with.json", dir);
	if (!ASSERT_OK(write_json(with, m), "write with"))
		goto cleanup;
	st->have = false;
	if (!ASSERT_OK(write_json(none, m), "write none"))
		goto cleanup;
	if (!ASSERT_OK(fixture__write(dir, "check.py", bpf_py, strlen(bpf_py)), "check.py"))
		goto cleanup;
	ASSERT_OK(fixture__run("python3 %s/check.py %s %s", dir, none, with), "bpf_stats keys");
cleanup:
	fixture__run("rm -rf '%s'", dir);
out:
	free(text);
	model__free(m);
	free(m);
}
