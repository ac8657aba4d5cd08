// SPDX-License-Identifier: GPL-2.0
/* The stack profile (interning, merging, raw samples) and the output-format registry. */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "model/profile.h"
#include "report/outputs.h"

TEST(profile_interns_and_merges)
{
	static const char *const a[] = { "main", "load;model", "malloc" };
	static const char *const b[] = { "main", "load;model", "calloc" };
	struct profile p;
	char copy[16];

	profile__init(&p, false);
	strcpy(copy, "main");
	ASSERT_TRUE(profile__intern(&p, copy) == profile__intern(&p, "main"), "one pointer");
	ASSERT_OK(profile__add(&p, 1, "llama", a, 3, 4096), "a");
	ASSERT_OK(profile__add(&p, 1, "llama", a, 3, 8192), "a again");
	ASSERT_OK(profile__add(&p, 2, "llama", a, 3, 4096), "a in another phase");
	ASSERT_OK(profile__add(&p, 1, "llama", b, 3, 4096), "b");
	ASSERT_OK(profile__add(&p, 1, "other", a, 3, 4096), "a by another comm");
	ASSERT_EQ(p.nstacks, 4UL, "merged per phase, comm and frames");
	ASSERT_EQ(p.stacks[0].bytes, 12288ULL, "bytes add up");
	ASSERT_EQ(p.stacks[0].samples, 2ULL, "samples add up");
	ASSERT_EQ(p.total, 5ULL, "total samples");
	ASSERT_STREQ(p.stacks[0].frames[1], "load;model", "a ';' stays in a frame");
	ASSERT_OK(profile__add_raw(&p, 1, 1, 0, 1, 10, 4096, 1, 0, (const __u64[]){ 1 }, 1), "no raw");
	ASSERT_EQ(p.nraw, 0UL, "raw samples only when asked");
	profile__free(&p);
}

/* the timed samples keep their time, weight, stack, process and thread */
TEST(profile_timed_samples_keep_their_thread)
{
	static const char *const a[] = { "main", "decode" };
	static const char *const b[] = { "main", "load" };
	struct profile p;

	profile__init(&p, false);
	ASSERT_TRUE(profile__add_when(&p, 7, 8, 100, 4096) == -EINVAL, "no stack yet");
	ASSERT_OK(profile__add(&p, 1, "llama", a, 2, 4096), "a");
	ASSERT_OK(profile__add_when(&p, 7, 8, 100, 4096), "a when");
	ASSERT_OK(profile__add(&p, 1, "llama", b, 2, 8192), "b");
	ASSERT_OK(profile__add_when(&p, 7, 9, 200, 8192), "b when");
	ASSERT_EQ(p.nwhen, 2UL, "two timed samples");
	ASSERT_EQ(p.when[0].tid, 8U, "a's thread");
	ASSERT_EQ(p.when[1].tid, 9U, "b's thread");
	ASSERT_EQ(p.when[1].pid, 7U, "b's process");
	ASSERT_EQ(p.when[1].stack, 1U, "b's stack");
	ASSERT_EQ(p.when[1].ts_ns, 200ULL, "b's time");
	ASSERT_EQ(p.when[1].weight, 8192ULL, "b's weight");
	profile__free(&p);
}

TEST(profile_raw_samples_in_time_order)
{
	struct profile p;
	__u64 ips[2] = { 0x401000, 0x402000 };

	profile__init(&p, true);
	ASSERT_OK(profile__add_raw(&p, 7, 8, 1, 1, 300, 4096, 1, 0, ips, 2), "t300");
	ASSERT_OK(profile__add_raw(&p, 7, 8, 0, 1, 100, 4096, 1, 0, ips, 2), "t100");
	ASSERT_OK(profile__add_raw(&p, 7, 9, 1, 2, 200, 4096, 1, 0, ips, 1), "t200");
	ASSERT_OK(profile__add_map(&p, 7, 0x400000, 0x500000, 0, "/bin/x", NULL, 0), "map");
	profile__sort_raw(&p);
	ASSERT_EQ(p.raw[0]->ts_ns, 100ULL, "first");
	ASSERT_EQ(p.raw[1]->ts_ns, 200ULL, "second");
	ASSERT_EQ(p.raw[2]->ts_ns, 300ULL, "third");
	ASSERT_EQ(p.raw[1]->n, 1U, "frames kept");
	ASSERT_EQ(p.raw[0]->ips[1], 0x402000ULL, "addresses kept");
	ASSERT_EQ(p.raw[0]->cpu, 0U, "t100's CPU");
	ASSERT_EQ(p.raw[2]->cpu, 1U, "t300's CPU");
	ASSERT_EQ(p.nmaps, 1UL, "map kept");
	ASSERT_STREQ(p.maps[0].path, "/bin/x", "map path");
	profile__free(&p);
}

TEST(output_registry_is_well_formed)
{
	unsigned int n = outputs__nformats(), i, j;

	ASSERT_GE(n, 4U, "json, folded, perf-data, svg");
	ASSERT_LT(n, (unsigned int)OUTPUTS_MAX, "room in OUTPUTS_MAX");
	for (i = 0; i < n; i++) {
		const struct output_format *f = output_formats[i];

		ASSERT_TRUE(f->name && f->name[0] && f->help && f->help[0] && f->write,
			    "name, help and writer");
		ASSERT_EQ(outputs__find(f->name), (int)i, f->name);
		for (j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(f->name, output_formats[j]->name), "unique names");
	}
	ASSERT_EQ(outputs__find("no-such-format"), -ENOENT, "unknown");
	ASSERT_TRUE(output_formats[outputs__find("perf-data")]->needs & OUTPUT_NEEDS_RAW,
		    "perf.data needs raw samples");
	ASSERT_TRUE(output_formats[outputs__find("perf-data")]->needs & OUTPUT_NEEDS_SEEK,
		    "perf.data needs to seek");
	ASSERT_TRUE(!(output_formats[outputs__find("json")]->needs & OUTPUT_NEEDS_STACKS),
		    "json needs no stacks");
}
