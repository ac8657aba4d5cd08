// SPDX-License-Identifier: GPL-2.0
/* Cause rules (lib/causerules), mapping origins and labels (model/origins), and what grew
 * (model/causes): parsing, allocator frames, arenas, attribution. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "collect/presets.h"
#include "lib/causerules.h"
#include "model/causes.h"
#include "model/model.h"

#define MIB (1ULL << 20)

static const char rules_text[] =
	"# a comment\n"
	"allocator malloc\n"
	"allocator operator new*\n"
	"allocator mmap\n"
	"preset llama\n"
	"cause KV cache\n"
	"remedy a smaller -c;\n"
	"remedy   -ctk q8_0   # comment\n"
	"frame llama_kv_cache::llama_kv_cache*\n"
	"origin llama_kv_cache::llama_kv_cache*\n"
	"cause prompt cache\n"
	"frame server_prompt_cache::*\n"
	"cause arenas\n"
	"origin glibc arena*\n"
	"cause pinned\n"
	"mapping /dev/nvidia*\n"
	"preset other\n"
	"cause not ours\n"
	"frame *\n";

TEST(causerules_parse_the_built_in_file)
{
	struct causerules r;
	char err[256] = "";
	size_t i, n = 0;

	causerules__init(&r);
	if (!ASSERT_OK(causerules__parse(&r, presets__causes(), "builtin", err, sizeof(err)), err))
		goto cleanup;
	ASSERT_OK(causerules__use_preset(&r, "llama"), "preset");
	for (i = 0; i < r.ncauses; i++) {
		if (!causerules__in_use(&r, &r.causes[i]))
			continue;
		n++;
		ASSERT_TRUE(r.causes[i].remedy[0] != '\0', r.causes[i].name);
		ASSERT_GT(r.causes[i].nrules, 0UL, r.causes[i].name);
	}
	ASSERT_GE(n, 8UL, "llama: weights, KV, compute, prompt cache, checkpoints, tokenizer, "
		  "arenas, CUDA pinned");
	ASSERT_TRUE(causerules__is_allocator(&r, "operator new(unsigned long)"), "new");
	ASSERT_TRUE(causerules__is_allocator(&r, "ggml_aligned_malloc"), "ggml");
	ASSERT_TRUE(causerules__is_allocator(&r, "sysmalloc_mmap.constprop.0"), "glibc internals");
	ASSERT_FALSE(causerules__is_allocator(&r, "llama_kv_cache::llama_kv_cache(int)"), "kv");
	ASSERT_GE(causerules__match(&r, CAUSE_FRAME, "server_prompt_cache::alloc(unsigned long)",
				    NULL), 0, "prompt cache frame");
	ASSERT_GE(causerules__match(&r, CAUSE_MAPPING, "/dev/nvidia0", NULL), 0, "nvidia");
cleanup:
	causerules__free(&r);
}

TEST(causerules_say_what_is_wrong_and_where)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "cause x\nfrmae y\n", "t:2: unknown directive 'frmae'" },
		{ "frame y\n", "t:1: 'frame' before any 'cause' line" },
		{ "\nremedy z\n", "t:2: 'remedy' before any 'cause' line" },
		{ "cause\n", "t:1: 'cause' needs a value" },
	};
	struct causerules r;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		causerules__init(&r);
		err[0] = '\0';
		ASSERT_EQ(causerules__parse(&r, bad[i].text, "t", err, sizeof(err)), -EINVAL,
			  bad[i].want);
		ASSERT_STREQ(err, bad[i].want, "message");
		causerules__free(&r);
	}
}

TEST(causerules_remedies_join_and_presets_select)
{
	const struct cause_rule *rule = NULL;
	struct causerules r;
	char err[256];

	causerules__init(&r);
	ASSERT_OK(causerules__parse(&r, rules_text, "t", err, sizeof(err)), err);
	ASSERT_STREQ(r.causes[0].remedy, "a smaller -c; -ctk q8_0", "joined, comment cut");
	ASSERT_EQ(causerules__match(&r, CAUSE_FRAME, "anything", NULL), -1, "no preset: none");
	ASSERT_OK(causerules__use_preset(&r, "llama"), "llama");
	ASSERT_EQ(causerules__match(&r, CAUSE_FRAME, "anything", NULL), -1, "other's unused");
	ASSERT_EQ(causerules__match(&r, CAUSE_FRAME, "server_prompt_cache::alloc", &rule), 1, "pc");
	ASSERT_STREQ(rule->text, "frame server_prompt_cache::*", "the rule as written");
	ASSERT_OK(causerules__use_preset(&r, "other"), "other");
	ASSERT_EQ(causerules__match(&r, CAUSE_FRAME, "anything", NULL), 4, "other's");
	/* a later, preset-less cause overrides (what --causes files do) */
	ASSERT_OK(causerules__parse(&r, "cause mine\nframe any*\n", "u", err, sizeof(err)), err);
	ASSERT_EQ(causerules__match(&r, CAUSE_FRAME, "anything", NULL), 5, "later wins");
	causerules__free(&r);
}

static void add_origin(struct model *m, __u32 tid, __u64 start, __u64 len, __u32 prot,
		       const char *const *frames, __u32 n)
{
	struct origin o = { .pid = 1, .tid = tid, .start = start, .len = len, .prot = prot,
			    .how = MP_ORIGIN_MMAP };

	strcpy(o.comm, "llama-server");
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, frames, n), "origin");
}

TEST(origins_label_arenas_and_find)
{
	static const char *const kv[] = { "main", "llama_kv_cache::llama_kv_cache(int, bool)",
					  "operator new(unsigned long)", "malloc", "mmap" };
	static const char *const arena[] = { "start_thread", "worker", "malloc", "mmap" };
	static const char *const stack[] = { "main", "pthread_create", "mmap" };
	static const char *const fn[] = { "std::function<void (int)>::operator()(int) const",
					  "mmap" };
	struct model *m = calloc(1, sizeof(*m));
	char err[256];

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	ASSERT_OK(causerules__parse(&m->rules, rules_text, "t", err, sizeof(err)), err);
	add_origin(m, 1, 0x10000000, 24 * MIB, 3, kv, 5);
	add_origin(m, 7, 0x20000000, 128 * MIB, 0, arena, 4);
	add_origin(m, 7, 0x20000000, 64 * MIB, 0, arena, 4);	/* a retry: the same arena */
	add_origin(m, 1, 0x40000000, 8 * MIB + 4096, 0, stack, 3);
	add_origin(m, 1, 0x50000000, 2 * MIB, 3, fn, 2);
	add_origin(m, 1, 0x10000000 + 4 * MIB, 1 * MIB, 3, stack, 3);	/* newer, inside kv */
	ASSERT_STREQ(m->origins.v[0].label, "llama_kv_cache::llama_kv_cache", "no parameters");
	ASSERT_STREQ(m->origins.v[1].label, "glibc arena of thread 7 (llama-server)", "arena");
	ASSERT_TRUE(m->origins.v[1].arena && !m->origins.v[2].arena, "a stack is no arena");
	ASSERT_EQ(m->origins.arenas, 1ULL, "one arena a thread");
	ASSERT_STREQ(m->origins.v[2].label, "pthread_create", "stack");
	ASSERT_STREQ(m->origins.v[3].label, "std::function<void (int)>::operator()", "operator()");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_ANON, 0x10000000 + MIB), 1U, "inside kv");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_ANON, 0x10000000 + 4 * MIB), 5U, "newest");
	/* the retry at the same start replaced the first reservation */
	ASSERT_EQ(m->origins.n, 5UL, "replaced");
	ASSERT_EQ(m->origins.v[1].len, 64 * MIB, "the newer one");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_ANON, 0x20000000 + 100 * MIB), 0U, "gone");
	ASSERT_EQ(origins__find(&m->origins, 2, MP_MAP_ANON, 0x10000000), 0U, "other pid's");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_ANON, 0x90000000), 0U, "none");
	model__free(m);
	free(m);
}

/*
 * A model file mapped, its head unmapped again (llama.cpp's unused fragments), and a thread
 * stack mapped over that head: the file mapping's origin stays the model's mmap, and the
 * stack's is its own; an origin of unknown backing (mremap, an older recording) names both.
 */
TEST(origins_of_a_file_mapping_are_file_ones)
{
	static const char *const model[] = { "main", "llama_model_load_from_file", "mmap" };
	static const char *const stack[] = { "ggml_graph_compute", "pthread_create", "mmap" };
	struct origin o = { .pid = 1, .tid = 1, .how = MP_ORIGIN_MMAP, .prot = 1 };
	struct model *m = calloc(1, sizeof(*m));

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	strcpy(o.comm, "llama-server");
	o.start = 0x70000000;
	o.len = 16 * MIB;
	o.backing = MP_BACKING_FILE;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, model, 3), "model");
	o.len = 8 * MIB + 4096;
	o.prot = 3;
	o.backing = MP_BACKING_ANON;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, stack, 3), "stack");
	ASSERT_EQ(m->origins.n, 2UL, "another backing at the same start is not the same mapping");
	/* the file's remaining VMA starts past the freed head, inside both ranges */
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_FILE, 0x70000000 + 9 * MIB), 1U,
		  "beyond the stack: the model's");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_FILE, 0x70000000 + 4 * MIB), 1U,
		  "inside the newer stack's range: still the model's");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_THREAD_STACK, 0x70000000), 2U,
		  "the stack's own");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_SHMEM, 0x70000000), 2U,
		  "shared memory may be either: the newest");
	o.backing = MP_BACKING_UNKNOWN;
	o.how = MP_ORIGIN_MREMAP;
	o.start = 0x80000000;
	o.len = MIB;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, stack, 3), "mremap");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_FILE, 0x80000000), 3U, "unknown: a file's");
	ASSERT_EQ(origins__find(&m->origins, 1, MP_MAP_ANON, 0x80000000), 3U, "unknown: anon's");
	model__free(m);
	free(m);
}

/* a raw sample of thread tid at ts_ns with frames[0..n) and its own origin */
static void add_raw(struct model *m, __u32 tid, __u64 ts_ns, const char *const *frames,
		    __u32 n, __u32 origin)
{
	static const __u64 ips[] = { 0x1000 };

	ASSERT_OK(profile__add(&m->profile, 1, "llama-driver", frames, n, MIB), "sample");
	ASSERT_OK(profile__add_raw(&m->profile, 1, tid, 0, 1, ts_ns, MIB, MP_FILE, origin, ips, 1),
		  "raw");
}

TEST(origins_of_sample_the_mmap_it_was_taken_in)
{
	static const char *const load[] = { "main", "llama_model_load_from_file", "mmap" };
	static const char *const touch[] = { "main", "touch_pages" };
	struct origin o = { .pid = 1, .tid = 1, .len = 16 * MIB, .how = MP_ORIGIN_MMAP };
	struct model *m = calloc(1, sizeof(*m));
	const struct profile_sample *const *raw;
	__u32 *byt = NULL;

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	m->profile.keep_raw = true;
	strcpy(o.comm, "llama-driver");
	/* an older mapping of the thread, then the model's, made at its mmap's exit */
	o.ts_ns = 50;
	o.start = 0x10000000;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, touch, 2), "older");
	o.ts_ns = 200;
	o.start = 0x20000000;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, load, 3), "model");
	o.tid = 2;
	o.ts_ns = 300;
	o.start = 0x30000000;
	ASSERT_OK(origins__add(&m->origins, &m->profile, &m->rules, &o, touch, 2), "tid 2's");
	add_raw(m, 1, 100, load, 3, 0);		/* inside the mmap: populated */
	add_raw(m, 2, 100, load, 3, 0);		/* another thread: made no such mapping */
	add_raw(m, 1, 100, touch, 2, 0);	/* a fault elsewhere: its next origin differs */
	add_raw(m, 1, 250, load, 3, 0);		/* after the mmap returned */
	add_raw(m, 1, 100, touch, 2, 1);	/* knew its mapping */
	if (!ASSERT_OK(origins__by_thread(&m->origins, &byt), "index"))
		goto cleanup;
	raw = (const struct profile_sample *const *)m->profile.raw;
	ASSERT_EQ(m->profile.nraw, 5UL, "raw samples");
	ASSERT_EQ(origins__of_sample(&m->origins, byt, &m->profile, raw[0]), 2U, "populated");
	ASSERT_EQ(origins__of_sample(&m->origins, byt, &m->profile, raw[1]), 0U, "other thread");
	ASSERT_EQ(origins__of_sample(&m->origins, byt, &m->profile, raw[2]), 0U, "other stack");
	ASSERT_EQ(origins__of_sample(&m->origins, byt, &m->profile, raw[3]), 0U, "after it");
	ASSERT_EQ(origins__of_sample(&m->origins, byt, &m->profile, raw[4]), 1U, "its own");
	ASSERT_EQ(origins__of_sample(&m->origins, NULL, &m->profile, raw[0]), 0U, "no index");
cleanup:
	free(byt);
	model__free(m);
	free(m);
}

static bool phase2_only(void *ctx, const struct profile_stack *s)
{
	return s->phase == *(__u32 *)ctx;
}

TEST(causes_attribute_frames_then_origins)
{
	static const char *const kv[] = { "main", "llama_kv_cache::llama_kv_cache(int)", "malloc",
					  "mmap" };
	static const char *const arena[] = { "start_thread", "worker", "malloc", "mmap" };
	/* the innermost matching frame decides: the prompt cache inside a KV-cache frame */
	static const char *const both[] = { "main", "llama_kv_cache::llama_kv_cache(int)",
					    "server_prompt_cache::alloc", "touch" };
	static const char *const plain[] = { "start_thread", "worker", "touch" };
	static const char *const other[] = { "main", "touch" };
	struct model *m = calloc(1, sizeof(*m));
	struct cause_report r = {};
	__u32 two = 2;
	char err[256];

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	ASSERT_OK(causerules__parse(&m->rules, rules_text, "t", err, sizeof(err)), err);
	ASSERT_OK(causerules__use_preset(&m->rules, "llama"), "preset");
	add_origin(m, 1, 0x10000000, 24 * MIB, 3, kv, 4);
	add_origin(m, 7, 0x20000000, 128 * MIB, 0, arena, 4);
	add_origin(m, 1, 0x30000000, 2 * MIB, 3, other, 2);
	/* frames: KV 24 MiB; prompt cache 16; arena growth by unnamed code (origin) 8;
	 * unmatched 3 (no origin) + 1 (an origin no rule names) */
	ASSERT_OK(profile__add_from(&m->profile, 1, "x", kv, 4, 24 * MIB, 0), "kv");
	ASSERT_OK(profile__add_from(&m->profile, 2, "x", both, 4, 16 * MIB, 1), "prompt");
	ASSERT_OK(profile__add_from(&m->profile, 2, "x", plain, 3, 8 * MIB, 2), "arena");
	ASSERT_OK(profile__add_from(&m->profile, 2, "x", other, 2, 3 * MIB, 0), "nothing");
	ASSERT_OK(profile__add_from(&m->profile, 3, "x", other, 2, 1 * MIB, 3), "unnamed");
	if (!ASSERT_OK(causes__attribute(m, NULL, NULL, &r), "attribute"))
		goto cleanup;
	ASSERT_EQ(r.total, 52 * MIB, "total");
	ASSERT_EQ(r.unmatched, 4 * MIB, "unmatched");
	if (!ASSERT_EQ(r.n, 3UL, "three causes"))
		goto cleanup;
	ASSERT_STREQ(r.v[0].cause->name, "KV cache", "largest first");
	ASSERT_EQ(r.v[0].bytes, 24 * MIB, "kv bytes");
	ASSERT_STREQ(r.v[1].cause->name, "prompt cache", "innermost frame wins");
	ASSERT_EQ(r.v[1].bytes, 16 * MIB, "prompt bytes");
	ASSERT_STREQ(r.v[2].cause->name, "arenas", "by the grown mapping's origin");
	ASSERT_STREQ(r.v[2].rule->text, "origin glibc arena*", "its rule");
	causes__report_free(&r);
	/* a subset: phase 2 only (what per-request attribution does) */
	ASSERT_OK(causes__attribute(m, phase2_only, &two, &r), "subset");
	ASSERT_EQ(r.total, 27 * MIB, "phase 2 total");
	ASSERT_EQ(r.unmatched, 3 * MIB, "phase 2 unmatched");
cleanup:
	causes__report_free(&r);
	model__free(m);
	free(m);
}

TEST(causes_since_a_time_in_one_process)
{
	static const char *const kv[] = { "main", "llama_kv_cache::llama_kv_cache(int)" };
	static const char *const pc[] = { "main", "server_prompt_cache::alloc" };
	static const char *const other[] = { "main", "touch" };
	struct model *m = calloc(1, sizeof(*m));
	struct cause_span cs = {};
	size_t ckv, cpc;
	char err[256];

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	ASSERT_OK(causerules__parse(&m->rules, rules_text, "t", err, sizeof(err)), err);
	ASSERT_OK(causerules__use_preset(&m->rules, "llama"), "preset");
	/* before 100: the KV cache (not counted); from 100: prompt cache 3, unmatched 1; and
	 * another process's prompt cache (not counted) */
	ASSERT_OK(profile__add_from(&m->profile, 1, "x", kv, 2, 8 * MIB, 0), "kv");
	ASSERT_OK(profile__add_when(&m->profile, 1, 1, 50, 8 * MIB), "kv when");
	ASSERT_OK(profile__add_from(&m->profile, 2, "x", pc, 2, 3 * MIB, 0), "pc");
	ASSERT_OK(profile__add_when(&m->profile, 1, 1, 100, 2 * MIB), "pc at 100");
	ASSERT_OK(profile__add_when(&m->profile, 1, 1, 200, 1 * MIB), "pc at 200");
	ASSERT_OK(profile__add_when(&m->profile, 2, 2, 200, 5 * MIB), "other process");
	ASSERT_OK(profile__add_from(&m->profile, 2, "x", other, 2, 1 * MIB, 0), "other");
	ASSERT_OK(profile__add_when(&m->profile, 1, 1, 300, 1 * MIB), "unmatched");
	if (!ASSERT_OK(causes__span(m, &(struct cause_filter){ .pid = 1, .from_ns = 100 }, &cs),
		       "since"))
		goto cleanup;
	for (ckv = 0; ckv < cs.ncauses && strcmp(m->rules.causes[ckv].name, "KV cache"); ckv++)
		;
	for (cpc = 0; cpc < cs.ncauses && strcmp(m->rules.causes[cpc].name, "prompt cache");
	     cpc++)
		;
	if (!ASSERT_TRUE(ckv < cs.ncauses && cpc < cs.ncauses, "both causes in the rules"))
		goto cleanup;
	ASSERT_EQ(cs.total, 4 * MIB, "total");
	ASSERT_EQ(cs.bytes[ckv], 0ULL, "before the time");
	ASSERT_EQ(cs.bytes[cpc], 3 * MIB, "prompt cache");
	ASSERT_EQ(cs.bytes[cs.ncauses], 1 * MIB, "unmatched");
cleanup:
	causes__span_free(&cs);
	model__free(m);
	free(m);
}

TEST(causes_mapping_rules_match_the_origin_path)
{
	static const char *const pin[] = { "main", "worker", "mmap" };
	static const char *const use[] = { "main", "touch" };
	struct model *m = calloc(1, sizeof(*m));
	struct cause_report r = {};
	char err[256];

	if (!ASSERT_TRUE(m != NULL, "alloc"))
		return;
	model__init(m, 1, 0);
	ASSERT_OK(causerules__parse(&m->rules, rules_text, "t", err, sizeof(err)), err);
	ASSERT_OK(causerules__use_preset(&m->rules, "llama"), "preset");
	add_origin(m, 1, 0x10000000, 4 * MIB, 3, pin, 3);
	ASSERT_OK(profile__add_from(&m->profile, 1, "x", use, 2, 4 * MIB, 1), "pinned");
	ASSERT_OK(causes__attribute(m, NULL, NULL, &r), "before the path is known");
	ASSERT_EQ(r.unmatched, 4 * MIB, "no path: unmatched");
	causes__report_free(&r);
	m->origins.v[0].path = profile__intern(&m->profile, "/dev/nvidia0");
	ASSERT_OK(causes__attribute(m, NULL, NULL, &r), "with the path");
	if (ASSERT_EQ(r.n, 1UL, "one cause"))
		ASSERT_STREQ(r.v[0].cause->name, "pinned", "by mapping path");
	causes__report_free(&r);
	model__free(m);
	free(m);
}

/* A build that accepts --new and -x, deprecates --old, lacks --gone. */
static bool build_accepts(void *ctx, const char *flag)
{
	return !strcmp(flag, "--new") || !strcmp(flag, "-x");
}

TEST(causerules_remedy_names_the_builds_flags)
{
	static const char text[] =
		"cause c\n"
		"remedy Always said.\n"
		"remedy --new N caps it (-x too).\n"
		"remedy-or --old N caps it.\n"
		"remedy --gone is no more.\n"
		"remedy --old, and no alternative.\n"
		"remedy re-evaluating is no flag; -1 is none.\n";
	struct causerules r;
	char err[256], buf[512];

	causerules__init(&r);
	ASSERT_EQ(causerules__parse(&r, "cause d\nremedy-or misplaced\n", "t", err, sizeof(err)),
		  -EINVAL, "remedy-or first");
	ASSERT_STREQ(err, "t:2: 'remedy-or' before any 'remedy' line", "its message");
	causerules__free(&r);
	causerules__init(&r);
	if (!ASSERT_OK(causerules__parse(&r, text, "t", err, sizeof(err)), "parse"))
		goto out;
	/* flags not known: every part's first alternative, as written */
	ASSERT_STREQ(causerules__remedy(&r.causes[0], NULL, NULL, buf, sizeof(buf)),
		     "Always said. --new N caps it (-x too). --gone is no more. --old, and no "
		     "alternative. re-evaluating is no flag; -1 is none.", "as written");
	ASSERT_STREQ(r.causes[0].remedy, buf, "the default remedy");
	/* the build's: its flags only, an older build's alternative where it needs one */
	ASSERT_STREQ(causerules__remedy(&r.causes[0], build_accepts, NULL, buf, sizeof(buf)),
		     "Always said. --new N caps it (-x too). re-evaluating is no flag; -1 is none.",
		     "for the build");
out:
	causerules__free(&r);
}

static bool old_build(void *ctx, const char *flag)
{
	return !strcmp(flag, "--old");
}

TEST(causerules_remedy_or_for_an_older_build)
{
	struct causerules r;
	char err[256], buf[256];

	causerules__init(&r);
	if (!ASSERT_OK(causerules__parse(&r, "cause c\nremedy --new N caps it.\n"
					 "remedy-or --old N caps it.\n", "t", err, sizeof(err)),
		       "parse"))
		goto out;
	ASSERT_STREQ(causerules__remedy(&r.causes[0], old_build, NULL, buf, sizeof(buf)),
		     "--old N caps it.", "the older build's flag");
out:
	causerules__free(&r);
}
