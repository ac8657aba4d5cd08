// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON summary of a hand-built model, read back by python3's json module (skipped
 * without python3): contiguous histogram buckets, top_mappings' exact path, deleted, start
 * and size.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "model/model.h"
#include "report/report_json.h"

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
